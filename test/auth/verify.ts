import t from 'tap'
import { build, claims, expiredToken, signJwt, TEST_SECRET, userWithTokens, type App } from '../helper.js'

const verify = (app: App, headers: Record<string, string> = {}) =>
  app.inject({ method: 'GET', url: '/auth/verify', headers })

const refused = (reason: string) => ({ valid: false, reasons: [reason], exception: 'InvalidToken' })

t.test('a token from POST /auth is valid: raw, with Bearer, under any header-name case', async (t) => {
  const app = await build(t)
  const { access_token } = await userWithTokens(app, 'ana')
  const variants: Record<string, string>[] = [
    { Authorization: access_token },
    { authorization: access_token },
    { AUTHORIZATION: access_token },
    { Authorization: `Bearer ${access_token}` },
    { Authorization: `bearer ${access_token}` }
  ]
  for (const headers of variants) {
    const response = await verify(app, headers)
    t.equal(response.statusCode, 200, JSON.stringify(Object.keys(headers)))
    t.same(response.json(), { valid: true })
  }
})

t.test('no Authorization header, or an empty one, is 400 Unauthorized', async (t) => {
  const app = await build(t)
  const variants: Record<string, string>[] = [{}, { Authorization: '' }, { Authorization: '   ' }]
  for (const headers of variants) {
    const response = await verify(app, headers)
    t.equal(response.statusCode, 400)
    t.strictSame(response.json(), { reasons: ['Authorization header not present.'], exception: 'Unauthorized' })
  }
})

t.test('an expired token is 401 with the exact reason probes match on', async (t) => {
  const app = await build(t)
  const response = await verify(app, { Authorization: expiredToken('ana') })
  t.equal(response.statusCode, 401)
  t.strictSame(response.json(), refused('Signature has expired.'))
})

t.test('every kind of unusable token is 401 InvalidToken with valid false', async (t) => {
  const app = await build(t)
  const { access_token } = await userWithTokens(app, 'ana')
  const [header, payload, signature] = access_token.split('.') as [string, string, string]
  const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString())
  const base64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url')
  const withoutClaim = (name: string) => {
    const c: Record<string, unknown> = claims('ana')
    delete c[name]
    return signJwt(c)
  }

  const attacks: Record<string, string> = {
    'altered payload': `${header}.${base64({ ...decoded, user_id: 'admin' })}.${signature}`,
    'alg none': `${base64({ alg: 'none', typ: 'JWT' })}.${payload}.`,
    'alg none with the original signature': `${base64({ alg: 'none', typ: 'JWT' })}.${payload}.${signature}`,
    'signed with another secret': signJwt(claims('ana'), { secret: 'another-secret-of-at-least-32-bytes!!' }),
    'HS512 with our secret': signJwt(claims('ana'), { header: { alg: 'HS512', typ: 'JWT' } }),
    'wrong issuer': signJwt(claims('ana', { iss: 'someone-else' })),
    'missing user_id': withoutClaim('user_id'),
    'missing exp': withoutClaim('exp'),
    'missing iat': withoutClaim('iat'),
    'missing iss': withoutClaim('iss'),
    'user_id not a string': signJwt(claims('ana', { user_id: 42 })),
    'exp a string': signJwt(claims('ana', { exp: String(Math.floor(Date.now() / 1000) + 600) })),
    'exp a float': signJwt(claims('ana', { exp: Math.floor(Date.now() / 1000) + 600.5 })),
    'exp beyond safe integers': signJwt(claims('ana', { exp: 1e300 })),
    'stripped signature': `${header}.${payload}.`,
    'two parts': `${header}.${payload}`,
    garbage: 'not-a-token',
    'three garbage parts': 'abc.def.ghi',
    'payload not JSON': signJwt('{"user_id": '),
    'payload a JSON array': signJwt('[1,2,3]')
  }
  for (const [name, token] of Object.entries(attacks)) {
    const response = await verify(app, { Authorization: token })
    t.equal(response.statusCode, 401, name)
    t.match(response.json(), { valid: false, reasons: [String], exception: 'InvalidToken' }, name)
    t.equal(Object.keys(response.json()).length, 3, `${name}: only valid, reasons, exception`)
  }
})

t.test('claims beyond the four are ignored', async (t) => {
  const app = await build(t)
  const response = await verify(app, { Authorization: signJwt(claims('ana', { scopes: ['read'], rate: 5 })) })
  t.equal(response.statusCode, 200)
})

t.test('verification is stateless: a well-signed token of an unknown user is valid', async (t) => {
  const app = await build(t)
  const response = await verify(app, { Authorization: signJwt(claims('nobody')) })
  t.equal(response.statusCode, 200)
})

t.test('verify is not rate limited: probes may poll it constantly', async (t) => {
  const app = await build(t, { AUTH_RATE_LIMIT: '2' })
  const token = signJwt(claims('probe'))
  for (let i = 0; i < 30; i++) {
    const response = await verify(app, { Authorization: token })
    if (response.statusCode !== 200) return t.fail(`call ${i} answered ${response.statusCode}`)
  }
  t.pass('30 calls, all 200')
})

t.test('a token refused for its nbf is accepted once nbf has passed: the refusal is not cached past it', async (t) => {
  const app = await build(t)
  const nbf = Math.floor(Date.now() / 1000) + 60
  const token = signJwt(claims('ana', { nbf }))
  const early = await verify(app, { Authorization: token })
  t.equal(early.statusCode, 401, 'not yet')
  t.match(early.json().reasons, [/will be active/])
  // The clock moves past nbf (verification results are cached, refusals for up to ten minutes).
  t.capture(Date, 'now', () => nbf * 1000 + 1000)
  const later = await verify(app, { Authorization: token })
  t.equal(later.statusCode, 200, 'valid from nbf on')
  const read = await app.inject({ url: '/v1/events?limit=1', headers: { authorization: token } })
  t.equal(read.statusCode, 200, 'on a /v1 route too')
})

t.test('the signing secret is the configured one', async (t) => {
  const app = await build(t, { JWT_SECRET: 'x'.repeat(40) })
  t.equal((await verify(app, { Authorization: signJwt(claims('ana')) })).statusCode, 401, 'TEST_SECRET no longer signs')
  t.equal(
    (await verify(app, { Authorization: signJwt(claims('ana'), { secret: 'x'.repeat(40) }) })).statusCode,
    200
  )
  t.not(TEST_SECRET, 'x'.repeat(40))
})

t.test('verification is stateless: it works while the store is away', async (t) => {
  const app = await build(t)
  const token = signJwt(claims('ana'))
  await app.store.close()
  const response = await verify(app, { Authorization: token })
  t.equal(response.statusCode, 200)
})

t.test('unknown query parameters are ignored', async (t) => {
  const app = await build(t)
  const response = await app.inject({ url: '/auth/verify?debug=1&token=x', headers: { authorization: signJwt(claims('ana')) } })
  t.equal(response.statusCode, 200)
})
