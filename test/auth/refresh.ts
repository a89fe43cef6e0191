import t from 'tap'
import { hashRefreshToken } from '../../src/auth/refresh-tokens.js'
import { build, claims, expiredToken, signJwt, userWithTokens, type App } from '../helper.js'

const refresh = (app: App, authorization: string | undefined, payload: object) =>
  app.inject({
    method: 'POST',
    url: '/auth/refresh',
    headers: authorization === undefined ? {} : { authorization },
    payload
  })

const verifies = async (app: App, token: string) =>
  (await app.inject({ url: '/auth/verify', headers: { authorization: token } })).statusCode === 200

t.test('an active access token and the refresh token give a new access token, and only that', async (t) => {
  const app = await build(t)
  const { access_token, refresh_token } = await userWithTokens(app, 'ana')
  const response = await refresh(app, access_token, { refresh_token })
  t.equal(response.statusCode, 200)
  t.same(Object.keys(response.json()), ['access_token'])
  t.ok(await verifies(app, response.json().access_token))
})

t.test('an expired access token can be refreshed', async (t) => {
  const app = await build(t)
  const { refresh_token } = await userWithTokens(app, 'ana')
  const expired = expiredToken('ana')
  t.notOk(await verifies(app, expired), 'the old token is expired')
  const response = await refresh(app, `Bearer ${expired}`, { refresh_token })
  t.equal(response.statusCode, 200)
  t.ok(await verifies(app, response.json().access_token))
})

t.test('the refresh token is not rotated: it works again', async (t) => {
  const app = await build(t)
  const { access_token, refresh_token } = await userWithTokens(app, 'ana')
  for (let i = 0; i < 3; i++) t.equal((await refresh(app, access_token, { refresh_token })).statusCode, 200)
})

t.test("another user's refresh token is refused", async (t) => {
  const app = await build(t)
  const ana = await userWithTokens(app, 'ana')
  const bob = await userWithTokens(app, 'bob')
  const response = await refresh(app, ana.access_token, { refresh_token: bob.refresh_token })
  t.equal(response.statusCode, 401)
  t.strictSame(response.json(), {
    reasons: ['The refresh token is not valid for this user.'],
    exception: 'AuthenticationFailed'
  })
})

t.test('unknown, malformed and expired refresh tokens are 401 AuthenticationFailed', async (t) => {
  const app = await build(t)
  const { access_token, refresh_token } = await userWithTokens(app, 'ana')
  for (const candidate of ['6f1c1b9e-6a43-4c55-9d3a-0c7a3f0e8b11', 'not-a-uuid', refresh_token.toUpperCase()]) {
    const response = await refresh(app, access_token, { refresh_token: candidate })
    t.equal(response.statusCode, 401, candidate)
    t.equal(response.json().exception, 'AuthenticationFailed')
  }
  await app.store.users.saveRefreshToken('ana', hashRefreshToken(refresh_token), Date.now() - 1)
  const expired = await refresh(app, access_token, { refresh_token })
  t.equal(expired.statusCode, 401, 'past its REFRESH_TOKEN_TTL')
  t.equal(expired.json().exception, 'AuthenticationFailed')
})

t.test('a removed user cannot refresh', async (t) => {
  const app = await build(t)
  const { access_token, refresh_token } = await userWithTokens(app, 'ana')
  await app.store.users.remove('ana')
  const response = await refresh(app, access_token, { refresh_token })
  t.equal(response.statusCode, 401)
  t.equal(response.json().exception, 'AuthenticationFailed')
})

t.test('no Authorization header is 401 Unauthorized (not 400 as on verify)', async (t) => {
  const app = await build(t)
  const { refresh_token } = await userWithTokens(app, 'ana')
  for (const header of [undefined, '']) {
    const response = await refresh(app, header, { refresh_token })
    t.equal(response.statusCode, 401)
    t.strictSame(response.json(), { reasons: ['Authorization header not present.'], exception: 'Unauthorized' })
  }
})

t.test('a forged or malformed access token is 401 InvalidToken', async (t) => {
  const app = await build(t)
  const { refresh_token } = await userWithTokens(app, 'ana')
  const forged = [
    signJwt(claims('ana'), { secret: 'not-our-secret-but-long-enough-to-sign' }),
    signJwt(claims('ana', { iss: 'elsewhere' })),
    'garbage'
  ]
  for (const token of forged) {
    const response = await refresh(app, token, { refresh_token })
    t.equal(response.statusCode, 401)
    t.equal(response.json().exception, 'InvalidToken')
    t.notOk('valid' in response.json(), '`valid` is only on /auth/verify')
  }
})

t.test('a body without refresh_token is 400 naming it', async (t) => {
  const app = await build(t)
  const { access_token } = await userWithTokens(app, 'ana')
  const response = await refresh(app, access_token, {})
  t.equal(response.statusCode, 400)
  t.same(response.json(), { reasons: ['body.refresh_token is required'], exception: 'BadRequest' })
})

t.test('an unknown body member is 400 naming it, even beside a good refresh token', async (t) => {
  const app = await build(t)
  const { access_token, refresh_token } = await userWithTokens(app, 'ana')
  const response = await refresh(app, access_token, { refresh_token, access_token })
  t.equal(response.statusCode, 400)
  t.strictSame(response.json(), { reasons: ['body.access_token is not allowed'], exception: 'BadRequest' })
})

t.test('refresh does not share the login limit: the Python client may refresh before every call', async (t) => {
  const app = await build(t, { AUTH_RATE_LIMIT: '2' })
  const { access_token, refresh_token } = await userWithTokens(app, 'ana')
  for (let i = 0; i < 25; i++) {
    const response = await refresh(app, access_token, { refresh_token })
    if (response.statusCode !== 200) return t.fail(`refresh ${i} answered ${response.statusCode}`)
  }
  t.pass('25 refreshes, all 200')
})

t.test('refresh is rate limited per client address (REFRESH_RATE_LIMIT a minute), with Retry-After', async (t) => {
  const app = await build(t, { REFRESH_RATE_LIMIT: '5' })
  const { access_token, refresh_token } = await userWithTokens(app, 'ana')
  const statuses = []
  for (let i = 0; i < 5; i++) statuses.push((await refresh(app, access_token, { refresh_token })).statusCode)
  t.strictSame(statuses, [200, 200, 200, 200, 200])
  const forged = await refresh(app, 'garbage', { refresh_token })
  t.equal(forged.statusCode, 429, 'counted before the token is even looked at')
  t.equal(forged.json().exception, 'TooManyRequests')
  t.ok(Number(forged.headers['retry-after']) > 0, 'Retry-After in seconds')
  const elsewhere = await app.inject({
    method: 'POST',
    url: '/auth/refresh',
    headers: { authorization: access_token },
    payload: { refresh_token },
    remoteAddress: '10.0.6.1'
  })
  t.equal(elsewhere.statusCode, 200, 'another address has its own allowance')
})
