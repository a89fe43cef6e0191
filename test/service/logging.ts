import { join } from 'node:path'
import t from 'tap'
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
