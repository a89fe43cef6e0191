import { createDecoder } from 'fast-jwt'
import { decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose'
import t from 'tap'
import { build, TEST_SECRET, userWithTokens } from '../helper.js'

t.test('an issued token is exactly the header and the four claims of the contract', async (t) => {
  const app = await build(t)
  const before = Math.floor(Date.now() / 1000)
  const { access_token } = await userWithTokens(app, 'ana')
  const after = Math.floor(Date.now() / 1000)

  t.strictSame(decodeProtectedHeader(access_token), { alg: 'HS256', typ: 'JWT' })
  const payload = decodeJwt(access_token)
  t.same(Object.keys(payload).sort(), ['exp', 'iat', 'iss', 'user_id'])
  t.equal(payload.user_id, 'ana')
  t.equal(payload.iss, 'frb-tracer')
  t.ok(Number.isInteger(payload.iat) && Number.isInteger(payload.exp), 'integer seconds')
  t.ok(payload.iat! >= before && payload.iat! <= after, 'iat is now')
  t.equal(payload.exp! - payload.iat!, 1800, 'exp - iat is the default ACCESS_TOKEN_TTL')

  const verified = await jwtVerify(access_token, new TextEncoder().encode(TEST_SECRET), {
    algorithms: ['HS256'],
    issuer: 'frb-tracer'
  })
  t.equal(verified.payload.user_id, 'ana', 'another library verifies our signature')

  const decodedByFastJwt = createDecoder({ complete: true })(access_token)
  t.strictSame(decodedByFastJwt.header, { alg: 'HS256', typ: 'JWT' })
})

t.test('ACCESS_TOKEN_TTL and JWT_ISSUER shape the claims', async (t) => {
  const app = await build(t, { ACCESS_TOKEN_TTL: '120', JWT_ISSUER: 'chime-frb' })
  const { access_token } = await userWithTokens(app, 'ana')
  const payload = decodeJwt(access_token)
  t.equal(payload.exp! - payload.iat!, 120)
  t.equal(payload.iss, 'chime-frb')
})

t.test('refreshed tokens have the same shape', async (t) => {
  const app = await build(t)
  const { access_token, refresh_token } = await userWithTokens(app, 'ana')
  const response = await app.inject({
    method: 'POST',
    url: '/auth/refresh',
    headers: { authorization: access_token },
    payload: { refresh_token }
  })
  const payload = decodeJwt(response.json().access_token)
  t.same(Object.keys(payload).sort(), ['exp', 'iat', 'iss', 'user_id'])
  t.equal(payload.exp! - payload.iat!, 1800)
  t.strictSame(decodeProtectedHeader(response.json().access_token), { alg: 'HS256', typ: 'JWT' })
})

t.test('@fastify/jwt is registered once and does the JWT work: its signer issues what its verifier and the service accept', async (t) => {
  const app = await build(t)
  t.ok(app.hasPlugin('@fastify/jwt'), 'the plugin is registered')
  const { access_token } = await userWithTokens(app, 'ana')
  t.strictSame(app.jwt.verify(access_token), decodeJwt(access_token), 'the plugin’s verifier passes an issued token')
  const now = Math.floor(Date.now() / 1000)
  const signed = app.jwt.sign({ user_id: 'ana', exp: now + 60, iat: now, iss: app.config.JWT_ISSUER })
  const verified = await app.inject({ url: '/auth/verify', headers: { authorization: signed } })
  t.strictSame(verified.json(), { valid: true }, 'a token from fastify.jwt.sign is one of ours')
  const foreign = app.jwt.sign({ user_id: 'ana', exp: now + 60, iat: now, iss: 'someone-else' })
  t.equal((await app.inject({ url: '/auth/verify', headers: { authorization: foreign } })).statusCode, 401, 'with the checks registered: another issuer is refused')
})
