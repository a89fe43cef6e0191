import t from 'tap'
import type { Test } from 'tap'
import { verifyPassword } from '../../src/auth/passwords.js'
import { ensureAdminUser } from '../../src/bootstrap.js'
import type { ConfigInput } from '../../src/config.js'
import { openStore } from '../../src/store/open.js'
import { testConfig } from '../helper.js'

/** ensureAdminUser on a fresh store, with what it announced. */
async function bootstrap(t: Test, env: ConfigInput, existingUsers: string[] = []) {
  const config = testConfig(t, env)
  const store = await openStore(config)
  t.teardown(() => store.close())
  for (const name of existingUsers) await store.users.create({ name, role: 'reader', password_hash: 'scrypt$x', created_at: Date.now() })
  const lines: string[] = []
  const created = await ensureAdminUser(store, config, (line) => lines.push(line))
  return { store, created, lines }
}

t.test('an empty store gets admin with TRACER_ADMIN_PASSWORD, silently', async (t) => {
  const { store, created, lines } = await bootstrap(t, { TRACER_ADMIN_PASSWORD: 'change-me' })
  t.equal(created, true)
  t.strictSame(lines, [])
  t.ok(await verifyPassword('change-me', (await store.users.find('admin'))?.password_hash))
})

t.test('TRACER_ADMIN_PASSWORD on a store with users: one line saying it was not applied', async (t) => {
  const { store, created, lines } = await bootstrap(t, { TRACER_ADMIN_PASSWORD: 'change-me' }, ['admin'])
  t.equal(created, false)
  t.equal(lines.length, 1, 'one line')
  t.match(lines[0], /^TRACER_ADMIN_PASSWORD was not applied: the store already has users\./)
  t.match(lines[0], 'users passwd admin --password-stdin', 'says how to set it')
  t.notMatch(lines[0], 'change-me', 'never the password')
  t.notMatch(lines[0], /\n/)
  t.equal((await store.users.find('admin'))?.password_hash, 'scrypt$x', 'the password is unchanged')
})

t.test('no TRACER_ADMIN_PASSWORD on a store with users: nothing to say', async (t) => {
  const { created, lines } = await bootstrap(t, {}, ['pipeline'])
  t.equal(created, false)
  t.strictSame(lines, [])
})
