import type { Test } from 'tap'
import type { NewUser, Store } from '../../src/store/port.js'

/** How a suite gets a fresh, empty store of the adapter under test. */
export type OpenStore = (t: Test) => Promise<Store>

const user = (name: string, overrides: Partial<NewUser> = {}): NewUser => ({
  name,
  passwordHash: `scrypt$hash-of-${name}`,
  role: 'reader',
  createdAt: 1_700_000_000_000,
  ...overrides
})

/** The behaviour every adapter of the storage port must show; written against the port only. */
export function storeConformance(t: Test, open: OpenStore) {
  t.test('ping answers on an open store', async (t) => {
    const store = await open(t)
    await t.resolves(store.ping())
  })

  t.test('users: create once, find, list by name, count', async (t) => {
    const store = await open(t)
    t.equal(await store.countUsers(), 0)
    t.equal(await store.createUser(user('zoe', { role: 'writer' })), true)
    t.equal(await store.createUser(user('ana')), true)
    t.equal(await store.createUser(user('ana', { role: 'admin' })), false, 'a name is unique')
    t.strictSame(await store.findUser('zoe'), {
      name: 'zoe',
      passwordHash: 'scrypt$hash-of-zoe',
      role: 'writer',
      createdAt: 1_700_000_000_000,
      refreshTokenHash: null,
      refreshTokenExpiresAt: null
    })
    t.equal((await store.findUser('ana'))?.role, 'reader', 'the failed duplicate changed nothing')
    t.equal(await store.findUser('nobody'), null)
    t.strictSame((await store.listUsers()).map((u) => u.name), ['ana', 'zoe'])
    t.equal(await store.countUsers(), 2)
  })

  t.test('names are compared exactly', async (t) => {
    const store = await open(t)
    await store.createUser(user('Ana'))
    t.equal(await store.findUser('ana'), null)
    t.equal(await store.createUser(user('ana')), true)
  })

  t.test('role, password and removal report whether the user exists', async (t) => {
    const store = await open(t)
    await store.createUser(user('ana'))
    t.equal(await store.setRole('ana', 'admin'), true)
    t.equal((await store.findUser('ana'))?.role, 'admin')
    t.equal(await store.setRole('bob', 'admin'), false)
    t.equal(await store.setPasswordHash('ana', 'scrypt$new'), true)
    t.equal((await store.findUser('ana'))?.passwordHash, 'scrypt$new')
    t.equal(await store.setPasswordHash('bob', 'scrypt$new'), false)
    t.equal(await store.removeUser('ana'), true)
    t.equal(await store.removeUser('ana'), false)
    t.equal(await store.findUser('ana'), null)
  })

  t.test('a saved refresh token replaces the previous one; a new password drops it', async (t) => {
    const store = await open(t)
    await store.createUser(user('ana'))
    t.equal(await store.saveRefreshToken('ana', 'a'.repeat(64), 1_800_000_000_000), true)
    t.equal(await store.saveRefreshToken('ana', 'b'.repeat(64), 1_900_000_000_000), true)
    t.match(await store.findUser('ana'), { refreshTokenHash: 'b'.repeat(64), refreshTokenExpiresAt: 1_900_000_000_000 })
    t.equal(await store.saveRefreshToken('bob', 'c'.repeat(64), 1), false, 'no such user')
    await store.setPasswordHash('ana', 'scrypt$new')
    t.match(await store.findUser('ana'), { refreshTokenHash: null, refreshTokenExpiresAt: null })
  })

  t.test('concurrent creation of one name: exactly one wins', async (t) => {
    const store = await open(t)
    const results = await Promise.all(Array.from({ length: 20 }, () => store.createUser(user('admin'))))
    t.equal(results.filter(Boolean).length, 1)
    t.equal(await store.countUsers(), 1)
  })
}
