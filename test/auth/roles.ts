import t from 'tap'
import { buildWithProbes, expiredToken, userWithTokens } from '../helper.js'

/** A write route guarded exactly as the write routes of CONTRACT section 6 are. */
const withWriteProbe = (t: Parameters<typeof buildWithProbes>[0]) =>
  buildWithProbes(t, (app) => {
    app.post(
      '/v1/probe-write',
      { onRequest: app.authenticate, preHandler: app.requireRole('writer') },
      async (request) => ({ user: request.user.user_id })
    )
    app.get('/v1/probe-read', { onRequest: app.authenticate }, async () => ({ ok: true }))
  })

t.test('writers and admins may write, readers get 403 Forbidden', async (t) => {
  const app = await withWriteProbe(t)
  for (const [name, role, status] of [
    ['rita', 'reader', 403],
    ['wes', 'writer', 200],
    ['ada', 'admin', 200]
  ] as const) {
    const { access_token } = await userWithTokens(app, name, role)
    const response = await app.inject({ method: 'POST', url: '/v1/probe-write', headers: { authorization: access_token } })
    t.equal(response.statusCode, status, role)
    if (status === 403) t.match(response.json(), { exception: 'Forbidden', reasons: [/writer/] })
    const read = await app.inject({ url: '/v1/probe-read', headers: { authorization: access_token } })
    t.equal(read.statusCode, 200, `${role} may read`)
  }
})

t.test('a valid token whose user no longer exists is 403 on writes', async (t) => {
  const app = await withWriteProbe(t)
  const { access_token } = await userWithTokens(app, 'wes', 'writer')
  await app.store.users.remove('wes')
  const response = await app.inject({ method: 'POST', url: '/v1/probe-write', headers: { authorization: access_token } })
  t.equal(response.statusCode, 403)
  t.equal(response.json().exception, 'Forbidden')
})

t.test('the authentication hook answers 401 before the role check', async (t) => {
  const app = await withWriteProbe(t)
  const none = await app.inject({ method: 'POST', url: '/v1/probe-write' })
  t.equal(none.statusCode, 401)
  t.strictSame(none.json(), { reasons: ['Authorization header not present.'], exception: 'Unauthorized' })
  const expired = await app.inject({ method: 'POST', url: '/v1/probe-write', headers: { authorization: expiredToken('wes') } })
  t.equal(expired.statusCode, 401)
  t.strictSame(expired.json(), { reasons: ['Signature has expired.'], exception: 'InvalidToken' })
  const read = await app.inject({ url: '/v1/probe-read', headers: { authorization: 'garbage' } })
  t.equal(read.statusCode, 401)
  t.equal(read.json().exception, 'InvalidToken')
})
