import t from 'tap'
import type { Test } from 'tap'
import { build, userWithTokens, type App } from '../helper.js'

/** Tokens live by the app's clock: these tests move it, and nothing waits. */

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
