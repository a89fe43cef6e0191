import t from 'tap'
import type { Test } from 'tap'
import { addUser, build, buildWithProbes, login, userWithTokens, type App } from '../helper.js'

/** Every "now" of the auth routes is the app's clock: these tests move it, and nothing waits. */

const NOW = Date.parse('2026-03-01T12:00:00Z')
const SECOND = 1000

async function appWithClock(t: Test, env: Record<string, string> = {}) {
  const clock = { now: NOW }
  const app = await build(t, env, { now: () => clock.now })
  return { app, clock }
}

const verify = (app: App, token: string) => app.inject({ url: '/auth/verify', headers: { authorization: token } })
const refresh = (app: App, token: string, refresh_token: string) =>
  app.inject({ method: 'POST', url: '/auth/refresh', headers: { authorization: token }, payload: { refresh_token } })
const postAuth = (app: App, username: string, password: string, remoteAddress = '10.0.9.1') =>
  app.inject({ method: 'POST', url: '/auth', payload: { username, password }, remoteAddress })

const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { iat: number; exp: number }

t.test('tokens are issued at the app’s clock and live by it, whatever the real time', async (t) => {
  const { app } = await appWithClock(t)
  const { access_token } = await userWithTokens(app, 'ana')
  const { iat, exp } = claimsOf(access_token)
  t.equal(iat, NOW / 1000, 'iat is the app’s now')
  t.equal(exp, NOW / 1000 + 1800, 'exp is ACCESS_TOKEN_TTL after it')
  // In real time this token expired long ago; on the app's clock it has not.
  t.strictSame((await verify(app, access_token)).json(), { valid: true })
})

t.test('the app’s clock moved past an access token’s life: refused as expired on every route, refreshed on refresh', async (t) => {
  const { app, clock } = await appWithClock(t, { ACCESS_TOKEN_TTL: '600' })
  const { access_token, refresh_token } = await userWithTokens(app, 'ana')
  const read = () => app.inject({ url: '/v1/events?limit=1', headers: { authorization: access_token } })

  clock.now = NOW + 600 * SECOND
  t.equal((await verify(app, access_token)).statusCode, 200, 'valid up to its exp')
  t.equal((await read()).statusCode, 200)

  clock.now = NOW + 601 * SECOND
  const expired = await verify(app, access_token)
  t.equal(expired.statusCode, 401)
  t.strictSame(expired.json(), { valid: false, reasons: ['Signature has expired.'], exception: 'InvalidToken' })
  const refusedRead = await read()
  t.equal(refusedRead.statusCode, 401)
  t.strictSame(refusedRead.json(), { reasons: ['Signature has expired.'], exception: 'InvalidToken' }, 'a /v1 read as well')

  const renewed = await refresh(app, access_token, refresh_token)
  t.equal(renewed.statusCode, 200, 'refresh takes the expired token')
  const { access_token: next } = renewed.json<{ access_token: string }>()
  t.equal(claimsOf(next).iat, clock.now / 1000, 'the new token is issued at the app’s now')
  t.strictSame((await verify(app, next)).json(), { valid: true })

  clock.now = NOW
  t.equal((await verify(app, access_token)).statusCode, 200, 'the clock moved back: the verification cache holds no expiry of its own')
})

t.test('the app’s clock moved past a refresh token’s life: refresh is refused', async (t) => {
  const { app, clock } = await appWithClock(t, { REFRESH_TOKEN_TTL: '86400' })
  const { access_token, refresh_token } = await userWithTokens(app, 'ana')

  clock.now = NOW + 86_399 * SECOND
  t.equal((await refresh(app, access_token, refresh_token)).statusCode, 200, 'within its life')

  clock.now = NOW + 86_401 * SECOND
  const late = await refresh(app, access_token, refresh_token)
  t.equal(late.statusCode, 401)
  t.strictSame(late.json(), { reasons: ['The refresh token is not valid for this user.'], exception: 'AuthenticationFailed' })

  const again = await login(app, 'ana', 'ana-password')
  t.equal((await refresh(app, again.access_token, again.refresh_token)).statusCode, 200, 'a login gives a refresh token that lives from the app’s now')
})

t.test('the login limits’ windows follow the app’s clock', async (t) => {
  const { app, clock } = await appWithClock(t, { AUTH_RATE_LIMIT: '2', AUTH_USER_FAILURE_LIMIT: '3', AUTH_USER_FAILURE_WINDOW: '600' })
  await addUser(app, 'ana', 'pw')
  await addUser(app, 'bob', 'pw')
  for (let i = 0; i < 2; i++) t.equal((await postAuth(app, 'ana', `guess ${i}`)).statusCode, 401)

  clock.now = NOW + 30 * SECOND
  const limited = await postAuth(app, 'ana', 'pw')
  t.equal(limited.statusCode, 429, 'the address has used its minute')
  t.equal(limited.headers['retry-after'], '30', 'Retry-After counts on the app’s clock')

  clock.now = NOW + 60 * SECOND
  t.equal((await postAuth(app, 'ana', 'pw')).statusCode, 200, 'a minute later on the app’s clock, the window is over')

  // Three failures for bob from three addresses: his username's limit, for the addresses that failed.
  for (let i = 0; i < 3; i++) t.equal((await postAuth(app, 'bob', 'guess', `10.0.9.${10 + i}`)).statusCode, 401)
  clock.now = NOW + 659 * SECOND
  t.equal((await postAuth(app, 'bob', 'pw', '10.0.9.10')).statusCode, 429, 'within AUTH_USER_FAILURE_WINDOW a failed address waits')
  clock.now = NOW + 660 * SECOND
  t.equal((await postAuth(app, 'bob', 'pw', '10.0.9.10')).statusCode, 200, 'after it, on the app’s clock, it does not')
})

t.test('refresh’s limit window follows the app’s clock', async (t) => {
  const { app, clock } = await appWithClock(t, { REFRESH_RATE_LIMIT: '2' })
  const { access_token, refresh_token } = await userWithTokens(app, 'ana')
  for (let i = 0; i < 2; i++) t.equal((await refresh(app, access_token, refresh_token)).statusCode, 200)
  t.equal((await refresh(app, access_token, refresh_token)).statusCode, 429)
  clock.now = NOW + 60 * SECOND
  t.equal((await refresh(app, access_token, refresh_token)).statusCode, 200)
})

t.test('a role change reaches the write routes once the app’s clock has moved past the role cache', async (t) => {
  const clock = { now: NOW }
  const app = await buildWithProbes(
    t,
    (probes) => {
      probes.post('/v1/probe-write', { onRequest: probes.authenticate, preHandler: probes.requireRole('writer') }, async () => ({ ok: true }))
    },
    {},
    { now: () => clock.now }
  )
  const { access_token } = await userWithTokens(app, 'wes', 'writer')
  const write = () => app.inject({ method: 'POST', url: '/v1/probe-write', headers: { authorization: access_token } })
  t.equal((await write()).statusCode, 200)
  await app.store.users.setRole('wes', 'reader')
  t.equal((await write()).statusCode, 200, 'the role is remembered for a few seconds')
  clock.now = NOW + 5 * SECOND
  t.equal((await write()).statusCode, 403, 'then read again')
})
