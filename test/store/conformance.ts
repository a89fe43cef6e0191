import type { Test } from 'tap'
import type { NewUserRecord } from '../../src/domain/records.js'
import type { Store } from '../../src/store/port.js'
import type { Sites } from '../../src/vocabulary.js'

/** How a suite gets a fresh, empty store of the adapter under test (of the default sites unless given). */
export type OpenStore = (t: Test, sites?: Sites) => Promise<Store>

const user = (name: string, overrides: Partial<NewUserRecord> = {}): NewUserRecord => ({
  name,
  password_hash: `scrypt$hash-of-${name}`,
  role: 'reader',
  created_at: 1_700_000_000_000,
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
    t.equal(await store.users.count(), 0)
    t.equal(await store.users.create(user('zoe', { role: 'writer' })), true)
    t.equal(await store.users.create(user('ana')), true)
    t.equal(await store.users.create(user('ana', { role: 'admin' })), false, 'a name is unique')
    t.strictSame(await store.users.find('zoe'), {
      name: 'zoe',
      password_hash: 'scrypt$hash-of-zoe',
      role: 'writer',
      created_at: 1_700_000_000_000,
      refresh_token_hash: null,
      refresh_token_expires_at: null
    })
    t.equal((await store.users.find('ana'))?.role, 'reader', 'the failed duplicate changed nothing')
    t.equal(await store.users.find('nobody'), null)
    t.strictSame((await store.users.list()).map((u) => u.name), ['ana', 'zoe'])
    t.equal(await store.users.count(), 2)
  })

  t.test('names are compared exactly', async (t) => {
    const store = await open(t)
    await store.users.create(user('Ana'))
    t.equal(await store.users.find('ana'), null)
    t.equal(await store.users.create(user('ana')), true)
  })

  t.test('role, password and removal report whether the user exists', async (t) => {
    const store = await open(t)
    await store.users.create(user('ana'))
    t.equal(await store.users.setRole('ana', 'admin'), true)
    t.equal((await store.users.find('ana'))?.role, 'admin')
    t.equal(await store.users.setRole('bob', 'admin'), false)
    t.equal(await store.users.setPasswordHash('ana', 'scrypt$new'), true)
    t.equal((await store.users.find('ana'))?.password_hash, 'scrypt$new')
    t.equal(await store.users.setPasswordHash('bob', 'scrypt$new'), false)
    t.equal(await store.users.remove('ana'), true)
    t.equal(await store.users.remove('ana'), false)
    t.equal(await store.users.find('ana'), null)
  })

  t.test('a saved refresh token replaces the previous one; a new password drops it', async (t) => {
    const store = await open(t)
    await store.users.create(user('ana'))
    t.equal(await store.users.saveRefreshToken('ana', 'a'.repeat(64), 1_800_000_000_000), true)
    t.equal(await store.users.saveRefreshToken('ana', 'b'.repeat(64), 1_900_000_000_000), true)
    t.match(await store.users.find('ana'), { refresh_token_hash: 'b'.repeat(64), refresh_token_expires_at: 1_900_000_000_000 })
    t.equal(await store.users.saveRefreshToken('bob', 'c'.repeat(64), 1), false, 'no such user')
    await store.users.setPasswordHash('ana', 'scrypt$new')
    t.match(await store.users.find('ana'), { refresh_token_hash: null, refresh_token_expires_at: null })
  })

  t.test('concurrent creation of one name: exactly one wins', async (t) => {
    const store = await open(t)
    const results = await Promise.all(Array.from({ length: 20 }, () => store.users.create(user('admin'))))
    t.equal(results.filter(Boolean).length, 1)
    t.equal(await store.users.count(), 1)
  })

  t.test('a store its opener created for no server awaits no demo: seedDemo writes nothing', async (t) => {
    const store = await open(t)
    t.equal(await store.firstStart.awaitsDemo(), false)
    let loaded = false
    const load = () => {
      loaded = true
      return { events: [], traces: [], datatrail: [], heartbeats: [], transitions: [] }
    }
    t.equal(await store.firstStart.seedDemo(load, 1), 'not-awaited')
    t.equal(loaded, false, 'the demo is not even made')
  })
}
