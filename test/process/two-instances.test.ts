import { join } from 'node:path'
import t from 'tap'
import { request, startServer } from './processes.js'

t.test('two server processes on one SQLite file accept and refresh each other’s tokens', async (t) => {
  // No JWT_SECRET: both instances must agree on the secret generated beside the shared file.
  const env = { TRACER_DB: join(t.testdir(), 'tracer.sqlite'), TRACER_ADMIN_PASSWORD: 'admin-password' }
  const [a, b] = await Promise.all([startServer(t, env), startServer(t, env)])
  t.not(a.url, b.url)

  const login = await request(`${a.url}/auth`, { body: { username: 'admin', password: 'admin-password' } })
  t.equal(login.status, 200, 'logged in on A')
  const { access_token, refresh_token } = login.body as { access_token: string; refresh_token: string }

  t.same(await request(`${b.url}/auth/verify`, { token: access_token }), { status: 200, body: { valid: true } }, 'B accepts A’s token')

  const refreshed = await request(`${b.url}/auth/refresh`, { token: access_token, body: { refresh_token } })
  t.equal(refreshed.status, 200, 'B refreshes with A’s refresh token')
  const fresh = refreshed.body.access_token as string
  t.same(await request(`${a.url}/auth/verify`, { token: fresh }), { status: 200, body: { valid: true } }, 'A accepts B’s token')

  const again = await request(`${b.url}/auth`, { body: { username: 'admin', password: 'admin-password' } })
  t.equal(again.status, 200, 'logged in again on B')
  const stale = await request(`${a.url}/auth/refresh`, { token: access_token, body: { refresh_token } })
  t.equal(stale.status, 401, 'A refuses the refresh token B superseded')
  t.equal(stale.body.exception, 'AuthenticationFailed')

  const adminAnnouncements = [...a.output, ...b.output].filter((line) => line.startsWith('Created user "admin"'))
  t.equal(adminAnnouncements.length, 0, 'with TRACER_ADMIN_PASSWORD set, no password is printed')
})
