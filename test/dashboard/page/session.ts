import t from 'tap'
import { ApiError, SessionEnded } from '../../../dashboard/src/errors.js'
import { lifetimeMs, Session } from '../../../dashboard/src/session.js'
import { expiredToken, userWithTokens, build } from '../../helper.js'
import { fakeFetch, json, tokenWith } from './fake-fetch.js'

const IAT = 1_700_000_000
const OLD = tokenWith({ iat: IAT, exp: IAT + 1800 }, 'old')
const NEW = tokenWith({ iat: IAT + 1000, exp: IAT + 2800 }, 'new')
const REFRESH = '0c6f7c3e-0000-4000-8000-000000000000'

/** A session logged in at time 0 of a fake clock, the service answering from `answer`. */
async function session(answer: Parameters<typeof fakeFetch>[0]) {
  const clock = { now: 0 }
  const network = fakeFetch((call) =>
    call.path === '/auth' ? json(200, { access_token: OLD, refresh_token: REFRESH }) : answer(call)
  )
  const started = await Session.login({ fetch: network.fetch, now: () => clock.now }, 'operator', 'secret')
  network.calls.length = 0
  return { started, clock, calls: network.calls }
}

t.test('login sends the credentials; calls carry the raw access token', async (t) => {
  const network = fakeFetch((call) => (call.path === '/auth' ? json(200, { access_token: OLD, refresh_token: REFRESH }) : json(200, [])))
  const started = await Session.login({ fetch: network.fetch, now: () => 0 }, 'operator', 'secret')
  await started.json('/v1/events')
  t.strictSame(network.calls, [
    { method: 'POST', path: '/auth', authorization: null, body: { username: 'operator', password: 'secret' } },
    { method: 'GET', path: '/v1/events', authorization: OLD, body: undefined }
  ])
  t.equal(started.username, 'operator')
})

t.test('a refused login rejects with the service’s reasons', async (t) => {
  const network = fakeFetch(() => json(401, { reasons: ['Wrong username or password.'], exception: 'AuthenticationFailed' }))
  const refused = Session.login({ fetch: network.fetch, now: () => 0 }, 'operator', 'nope')
  await t.rejects(refused, new ApiError(401, ['Wrong username or password.'], 'AuthenticationFailed'))
})

t.test('on a 401, the Python client’s sequence: refresh with the old token and the refresh token, then retry', async (t) => {
  const { started, calls } = await session((call) => {
    if (call.path === '/auth/refresh') return json(200, { access_token: NEW })
    return call.authorization === OLD ? json(401, { reasons: ['Signature has expired.'], exception: 'InvalidToken' }) : json(200, { ok: 1 })
  })
  t.strictSame(await started.json('/v1/events'), { ok: 1 })
  t.strictSame(calls, [
    { method: 'GET', path: '/v1/events', authorization: OLD, body: undefined },
    { method: 'POST', path: '/auth/refresh', authorization: OLD, body: { refresh_token: REFRESH } },
    { method: 'GET', path: '/v1/events', authorization: NEW, body: undefined }
  ])
})

t.test('the token is refreshed ahead of its expiry, counted from when it was received', async (t) => {
  t.equal(lifetimeMs(OLD), 1_800_000)
  t.equal(lifetimeMs('not-a-token'), undefined)
  const { started, clock, calls } = await session((call) => json(200, call.path === '/auth/refresh' ? { access_token: NEW } : {}))
  clock.now = 1_800_000 - 60_001
  await started.json('/v1/events')
  t.strictSame(calls.map((call) => call.path), ['/v1/events'], 'more than a minute left: no refresh')
  clock.now = 1_800_000 - 60_000
  await started.json('/v1/events')
  t.strictSame(calls.slice(1).map((call) => [call.path, call.authorization]), [
    ['/auth/refresh', OLD],
    ['/v1/events', NEW]
  ])
})

t.test('calls that meet a 401 together share one refresh', async (t) => {
  const { started, calls } = await session((call) =>
    call.path === '/auth/refresh' ? json(200, { access_token: NEW }) : call.authorization === OLD ? json(401, { reasons: ['x'], exception: 'InvalidToken' }) : json(200, {})
  )
  await Promise.all([started.json('/a'), started.json('/b'), started.json('/c')])
  t.equal(calls.filter((call) => call.path === '/auth/refresh').length, 1)
  t.equal(calls.filter((call) => call.authorization === NEW).length, 3)
})

t.test('a refused refresh ends the session; a failed one does not', async (t) => {
  let refresh = json(503, { reasons: ['The store is unreachable.'], exception: 'ServiceUnavailable' })
  const { started, calls } = await session((call) =>
    call.path === '/auth/refresh' ? refresh : json(401, { reasons: ['Signature has expired.'], exception: 'InvalidToken' })
  )
  await t.rejects(started.json('/v1/events'), ApiError, 'a 503 of the refresh is passed on')
  t.equal(started.active, true, 'and the session goes on')

  refresh = json(401, { reasons: ['The refresh token is not valid.'], exception: 'AuthenticationFailed' })
  await t.rejects(started.json('/v1/events'), new SessionEnded('Your session has ended: The refresh token is not valid. Log in again.'))
  t.equal(started.active, false)
  const before = calls.length
  await t.rejects(started.json('/v1/events'), SessionEnded)
  t.equal(calls.length, before, 'nothing is sent once the session has ended')
})

t.test('logging out forgets the tokens', async (t) => {
  const { started, calls } = await session(() => json(200, {}))
  started.logout()
  await t.rejects(started.json('/v1/events'), SessionEnded)
  t.strictSame(calls, [])
})

t.test('against the real service: an expired access token is refreshed and the call goes through', async (t) => {
  const app = await build(t)
  const { refresh_token } = await userWithTokens(app, 'operator')
  const seen: string[] = []
  const fetchApp = async (request: string | URL | Request, init: RequestInit = {}) => {
    const input = request instanceof Request ? request.url : request.toString()
    const headers = Object.fromEntries(new Headers(init.headers))
    const response = await app.inject({ method: (init.method ?? 'GET') as 'GET', url: input, headers, payload: init.body as string | undefined })
    seen.push(`${init.method ?? 'GET'} ${input} ${response.statusCode}`)
    return new Response(response.body, { status: response.statusCode, headers: { 'content-type': String(response.headers['content-type']) } })
  }
  const expired = new Session({ fetch: fetchApp, now: Date.now }, 'operator', { access_token: expiredToken('operator'), refresh_token })
  const events = await expired.json<{ events: unknown[] }>('/v1/events')
  t.strictSame(events.events, [])
  t.strictSame(seen, ['GET /v1/events 401', 'POST /auth/refresh 200', 'GET /v1/events 200'])
})
