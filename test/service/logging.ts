import { join } from 'node:path'
import t, { type Test } from 'tap'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { openSqliteStore } from '../../src/store/sqlite/store.js'
import { addUser, TEST_SECRET } from '../helper.js'
import { defaultSites } from '../sites.js'

t.test('a full auth flow logs no password, refresh token or access token', async (t) => {
  const lines: string[] = []
  const config = loadConfig({ TRACER_DB: join(t.testdir(), 'tracer.sqlite'), JWT_SECRET: TEST_SECRET, LOG_LEVEL: 'trace' })
  const app = await buildApp({ config, store: openSqliteStore(config.TRACER_DB, defaultSites), logStream: { write: (line) => lines.push(line) } })
  t.teardown(() => app.close())
  await addUser(app, 'ana', 'a-very-secret-password')

  const login = await app.inject({ method: 'POST', url: '/auth', payload: { username: 'ana', password: 'a-very-secret-password' } })
  const { access_token, refresh_token } = login.json()
  await app.inject({ url: '/auth/verify', headers: { authorization: access_token } })
  const refreshed = await app.inject({
    method: 'POST',
    url: '/auth/refresh',
    headers: { authorization: `Bearer ${access_token}` },
    payload: { refresh_token }
  })
  await app.inject({ method: 'POST', url: '/auth', payload: { username: 'ana', password: 'a-wrong-secret-password' } })

  t.ok(lines.length >= 8, `the flow was logged (${lines.length} lines)`)
  const log = lines.join('')
  for (const secret of [
    'a-very-secret-password',
    'a-wrong-secret-password',
    refresh_token,
    access_token,
    refreshed.json().access_token,
    TEST_SECRET
  ]) {
    t.notOk(log.includes(secret), `not in the log: ${secret.slice(0, 12)}…`)
  }
})

/** An app logging at `level` into lines, each parsed. */
async function loggedApp(t: Test, level: string, slowMs: string) {
  const lines: Record<string, unknown>[] = []
  const config = loadConfig({ TRACER_DB: join(t.testdir(), 'tracer.sqlite'), JWT_SECRET: TEST_SECRET, LOG_LEVEL: level, SLOW_REQUEST_MS: slowMs })
  const app = await buildApp({ config, store: openSqliteStore(config.TRACER_DB, defaultSites), logStream: { write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) } })
  t.teardown(() => app.close())
  return { app, lines }
}

t.test('at info an ordinary request logs nothing, a slow one a warning with its time', async (t) => {
  const quiet = await loggedApp(t, 'info', '600000')
  await quiet.app.inject({ url: '/health' })
  await quiet.app.inject({ url: '/auth/verify', headers: { authorization: 'not-a-token' } })
  t.strictSame(quiet.lines.filter((line) => line.reqId !== undefined), [], 'no line for a request')

  // A login hashes a password: never under a millisecond.
  const slow = await loggedApp(t, 'info', '1')
  await slow.app.inject({ method: 'POST', url: '/auth', payload: { username: 'nobody', password: 'a-wrong-secret-password' } })
  const warnings = slow.lines.filter((line) => line.msg === 'slow request')
  t.equal(warnings.length, 1)
  t.match(warnings[0], { level: 40, req: { method: 'POST', url: '/auth' }, res: { statusCode: 401 }, responseTime: Number })
})

t.test('at debug every request is logged as it arrives and as it ends', async (t) => {
  const { app, lines } = await loggedApp(t, 'debug', '600000')
  await app.inject({ url: '/health' })
  t.match(
    lines.filter((line) => line.reqId !== undefined),
    [
      { level: 20, msg: 'incoming request', req: { method: 'GET', url: '/health' } },
      { level: 20, msg: 'request completed', res: { statusCode: 200 }, responseTime: Number }
    ]
  )
})
