import { join } from 'node:path'
import t from 'tap'
import { run } from '../cli/run.js'
import { request, runCli, startServer, stop } from './processes.js'

t.test('the first start of an empty store: admin with a random password shown once, and demo data', async (t) => {
  const env = { TRACER_DB: join(t.testdir(), 'tracer.sqlite') }
  const first = await startServer(t, env)
  const announcement = first.output.find((line) => line.startsWith('Created user "admin"'))
  const password = /with password (\S+)$/.exec(announcement ?? '')?.[1]
  t.ok(password, 'the password is printed')
  t.notOk(first.output.some((line) => line.includes(password!) && line.startsWith('{')), 'it is not in a log line')
  const login = await request(`${first.url}/auth`, { body: { username: 'admin', password } })
  t.equal(login.status, 200, 'and it works')
  const token = login.body.access_token as string

  t.match(await first.lineMatching(/^Seeded a demo data set/), /2000 events over the last 30 days/)
  const day = 86_400_000
  const start = new Date(Date.now() - 31 * day).toISOString()
  const end = new Date(Date.now() + day).toISOString()
  const callbacks = await request(`${first.url}/v1/event-tracer/baseband-callbacks?start_time_utc=${start}&end_time_utc=${end}`, { token })
  const records = callbacks.body as unknown as { event_no: number; trace?: object }[]
  t.ok(records.length > 100, `${records.length} baseband callbacks`)
  t.ok(records.some((record) => record.trace !== undefined), 'with traces')
  const status = await request(`${first.url}/v1/event-tracer/event-status/${records[0]!.event_no}`, { token })
  t.equal(status.status, 200)
  t.strictSame(Object.keys(status.body).sort(), ['actions', 'datatrail', 'event_no', 'heartbeats', 'trace', 'tsar_classification', 'update_timestamp'])
  const events = await request(`${first.url}/v1/events?limit=5`, { token })
  t.equal((events.body.events as unknown[]).length, 5)
  await stop(first.child)

  // The README's walk-through, started by someone who ran npm start before.
  const second = await startServer(t, { ...env, TRACER_ADMIN_PASSWORD: 'change-me' })
  t.notOk(second.output.some((line) => line.includes('Created user')), 'the next start creates nobody')
  t.notOk(second.output.some((line) => line.includes('Seeded')), 'and seeds nothing')
  const notApplied = second.output.filter((line) => line.includes('TRACER_ADMIN_PASSWORD'))
  t.equal(notApplied.length, 1, 'one line says TRACER_ADMIN_PASSWORD was not applied')
  t.match(notApplied[0], /^TRACER_ADMIN_PASSWORD was not applied/)
  t.equal((await request(`${second.url}/auth`, { body: { username: 'admin', password: 'change-me' } })).status, 401)
  t.equal((await request(`${second.url}/auth`, { body: { username: 'admin', password } })).status, 200, 'the first password stays')
})

t.test('production starts without demo data', async (t) => {
  const server = await startServer(t, {
    TRACER_DB: join(t.testdir(), 'tracer.sqlite'),
    TRACER_ADMIN_PASSWORD: 'pw',
    NODE_ENV: 'production',
    JWT_SECRET: 'a-production-secret-of-at-least-32-bytes'
  })
  t.notOk(server.output.some((line) => line.includes('Seeded')))
  const token = (await request(`${server.url}/auth`, { body: { username: 'admin', password: 'pw' } })).body.access_token as string
  t.strictSame((await request(`${server.url}/v1/events`, { token })).body, { events: [], next_cursor: null })
})

t.test('a bad configuration value stops start-up with one line naming it', async (t) => {
  const result = await runCli(['serve'], { PORT: 'eighty', TRACER_DB: join(t.testdir(), 'tracer.sqlite') })
  t.equal(result.status, 1)
  t.match(result.stderr, /^tracer: Invalid configuration: PORT .*"eighty"/)
  t.equal(result.stderr.trim().split('\n').length, 1, 'one line')
})

t.test('production refuses to start without JWT_SECRET', async (t) => {
  // PORT=0: a start checks that it can listen first, and a server on 8000 must not decide this test.
  const result = await runCli(['serve'], { NODE_ENV: 'production', TRACER_DB: join(t.testdir(), 'tracer.sqlite'), PORT: '0' })
  t.equal(result.status, 1)
  t.equal(result.stderr.trim(), 'tracer: Invalid configuration: JWT_SECRET is required when NODE_ENV=production')
})

t.test('users commands work while the server runs on the same store', async (t) => {
  const env = { TRACER_DB: join(t.testdir(), 'tracer.sqlite'), TRACER_ADMIN_PASSWORD: 'admin-password' }
  const server = await startServer(t, env)
  const added = await run(['users', 'add', 'pipeline', '--role', 'writer', '--password-stdin'], env, 's3cret\n')
  t.equal(added.status, 0, added.stderr)
  const login = await request(`${server.url}/auth`, { body: { username: 'pipeline', password: 's3cret' } })
  t.equal(login.status, 200, 'the running server sees the new user')

  const changed = await run(['users', 'passwd', 'pipeline', '--password-stdin'], env, 'n3w\n')
  t.equal(changed.status, 0, changed.stderr)
  const old = await request(`${server.url}/auth`, { body: { username: 'pipeline', password: 's3cret' } })
  t.equal(old.status, 401, 'the old password no longer works')
  const refresh = await request(`${server.url}/auth/refresh`, {
    token: login.body.access_token as string,
    body: { refresh_token: login.body.refresh_token }
  })
  t.equal(refresh.status, 401, 'a new password ends the old refresh token')
  t.equal((await request(`${server.url}/auth`, { body: { username: 'pipeline', password: 'n3w' } })).status, 200)
})
