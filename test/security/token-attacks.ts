/**
 * Forged and malformed access tokens, built by hand with node:crypto and base64url, against the three
 * places that check them: GET /auth/verify, a /v1 read route, and POST /auth/refresh (which accepts an
 * expired token, but nothing else, together with the user's valid refresh token in the body).
 * Each forgery claims the user `ana`, whose refresh token the refresh requests carry: a forgery the
 * service accepted would answer 200 there.
 */
import { createHmac, createSign, generateKeyPairSync } from 'node:crypto'
import t from 'tap'
import type { Test } from 'tap'
import { build, claims, expiredToken, TEST_ISSUER, TEST_SECRET, userWithTokens, type App } from '../helper.js'

const b64url = (value: string | Buffer) => Buffer.from(value).toString('base64url')
const hmac = (algorithm: 'sha256' | 'sha384' | 'sha512', key: string | Buffer, input: string) =>
  createHmac(algorithm, key).update(input).digest('base64url')

/** A JWS: header and payload given as objects or as exact JSON text (duplicate keys, odd spacing). */
function jws(header: object | string, payload: object | string, sign: (input: string) => string = (input) => hmac('sha256', TEST_SECRET, input)) {
  const text = (part: object | string) => (typeof part === 'string' ? part : JSON.stringify(part))
  const input = `${b64url(text(header))}.${b64url(text(payload))}`
  return `${input}.${sign(input)}`
}

const HS256 = { alg: 'HS256', typ: 'JWT' }
const now = () => Math.floor(Date.now() / 1000)

interface Routes {
  app: App
  refreshToken: string
  realToken: string
}

type RouteName = 'verify' | 'read' | 'refresh'

function call(routes: Routes, route: RouteName, token: string) {
  const headers = { authorization: token }
  switch (route) {
    case 'verify':
      return routes.app.inject({ url: '/auth/verify', headers })
    case 'read':
      return routes.app.inject({ url: '/v1/events?limit=1', headers })
    case 'refresh':
      return routes.app.inject({ method: 'POST', url: '/auth/refresh', headers, payload: { refresh_token: routes.refreshToken } })
  }
}

const ALL: RouteName[] = ['verify', 'read', 'refresh']

/** 401 InvalidToken on every route; on /auth/verify with `valid: false` and nothing else. */
async function refused(t: Test, routes: Routes, name: string, token: string, on: RouteName[] = ALL) {
  for (const route of on) {
    const response = await call(routes, route, token)
    const label = `${name} on ${route}`
    t.equal(response.statusCode, 401, label)
    const body = response.json<Record<string, unknown>>()
    if (route === 'verify') {
      t.strictSame(Object.keys(body).sort(), ['exception', 'reasons', 'valid'], `${label}: valid, reasons, exception`)
      t.equal(body.valid, false, `${label}: valid false`)
    } else {
      t.strictSame(Object.keys(body).sort(), ['exception', 'reasons'], `${label}: the envelope`)
    }
    t.equal(body.exception, 'InvalidToken', `${label}: InvalidToken`)
    t.match(body.reasons, [/./], `${label}: one reason`)
    t.notMatch(response.body, TEST_SECRET, `${label}: the secret is not echoed`)
  }
}

/** Assertions that stop at the first failure of a long loop, so that a regression prints one line, not hundreds. */
async function allRefused(t: Test, routes: Routes, name: string, tokens: string[], on: RouteName[]) {
  let checked = 0
  for (const token of tokens) {
    for (const route of on) {
      const response = await call(routes, route, token)
      const body = response.json<Record<string, unknown>>()
      if (response.statusCode !== 401 || body.exception !== 'InvalidToken' || (route === 'verify' && body.valid !== false)) {
        return t.fail(`${name} on ${route}: ${response.statusCode} ${response.body} for ${token}`)
      }
      checked++
    }
  }
  t.pass(`${name}: ${tokens.length} tokens, ${checked} requests, every one 401 InvalidToken`)
}

async function setUp(t: Test): Promise<Routes> {
  const app = await build(t)
  const { access_token, refresh_token } = await userWithTokens(app, 'ana', 'reader')
  return { app, refreshToken: refresh_token, realToken: access_token }
}

t.test('the controls: the token from POST /auth and one signed like it pass all three routes', async (t) => {
  const routes = await setUp(t)
  for (const token of [routes.realToken, jws(HS256, claims('ana'))]) {
    for (const route of ALL) t.equal((await call(routes, route, token)).statusCode, 200, route)
  }
})

t.test('alg none, other HMAC algorithms, and stripped signatures', async (t) => {
  const routes = await setUp(t)
  const [, payload, signature] = routes.realToken.split('.') as [string, string, string]
  for (const alg of ['none', 'None', 'NONE', 'nOnE']) {
    const header = b64url(JSON.stringify({ alg, typ: 'JWT' }))
    await refused(t, routes, `alg ${alg}, empty signature part`, `${header}.${payload}.`)
    await refused(t, routes, `alg ${alg}, no signature part`, `${header}.${payload}`)
    await refused(t, routes, `alg ${alg}, the original signature kept`, `${header}.${payload}.${signature}`)
  }
  await refused(t, routes, 'HS512 signed with the real secret', jws({ alg: 'HS512', typ: 'JWT' }, claims('ana'), (input) => hmac('sha512', TEST_SECRET, input)))
  await refused(t, routes, 'HS384 signed with the real secret', jws({ alg: 'HS384', typ: 'JWT' }, claims('ana'), (input) => hmac('sha384', TEST_SECRET, input)))
  await refused(t, routes, 'alg hs256 (lower case)', jws({ alg: 'hs256', typ: 'JWT' }, claims('ana')))
  await refused(t, routes, 'no alg at all', jws({ typ: 'JWT' }, claims('ana')))
  await refused(t, routes, 'stripped signature', routes.realToken.split('.').slice(0, 2).join('.') + '.')
  await refused(t, routes, 'signed with an empty secret', jws(HS256, claims('ana'), (input) => hmac('sha256', '', input)))
  await refused(t, routes, 'signed with another secret', jws(HS256, claims('ana'), (input) => hmac('sha256', 'another-secret-that-is-32-bytes-long!', input)))
})

t.test('RS256 and key confusion, kid, jku, jwk and x5u headers', async (t) => {
  const routes = await setUp(t)
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const publicPem = publicKey.export({ type: 'spki', format: 'pem' }).toString()
  const rsaSign = (input: string) => createSign('RSA-SHA256').update(input).sign(privateKey).toString('base64url')
  const attackerJwk = publicKey.export({ format: 'jwk' })

  // The classic confusion: alg RS256, "verified" with the service's key material as if it were an
  // RSA public key, i.e. the signature is an HMAC made with the service secret.
  await refused(t, routes, 'RS256 whose signature is an HMAC with the service secret', jws({ alg: 'RS256', typ: 'JWT' }, claims('ana')))
  // And the other direction: HS256 keyed with an RSA public key (what a service with RSA keys would hold).
  await refused(t, routes, 'HS256 keyed with an RSA public key in PEM', jws(HS256, claims('ana'), (input) => hmac('sha256', publicPem, input)))
  await refused(t, routes, 'RS256 signed with the attacker key', jws({ alg: 'RS256', typ: 'JWT' }, claims('ana'), rsaSign))
  await refused(t, routes, 'RS256 with the attacker key embedded as jwk', jws({ alg: 'RS256', typ: 'JWT', jwk: attackerJwk }, claims('ana'), rsaSign))
  await refused(t, routes, 'RS256 with a jku pointing at the attacker', jws({ alg: 'RS256', typ: 'JWT', jku: 'https://attacker.example/jwks.json', kid: 'a' }, claims('ana'), rsaSign))
  await refused(t, routes, 'RS256 with an x5u pointing at the attacker', jws({ alg: 'RS256', typ: 'JWT', x5u: 'https://attacker.example/cert.pem' }, claims('ana'), rsaSign))
  const attackerSecret = 'attacker-chosen-secret-of-32-bytes!!'
  await refused(t, routes, 'HS256 with an oct jwk carrying the attacker secret', jws({ ...HS256, jwk: { kty: 'oct', k: b64url(attackerSecret) } }, claims('ana'), (input) => hmac('sha256', attackerSecret, input)))
  await refused(t, routes, 'HS256 with a jku, signed with the attacker secret', jws({ ...HS256, jku: 'https://attacker.example/jwks.json' }, claims('ana'), (input) => hmac('sha256', attackerSecret, input)))
  // kid pointing at a file whose content is known (empty), or at a SQL injection choosing the key.
  await refused(t, routes, "kid '../../dev/null', signed with the empty key", jws({ ...HS256, kid: '../../dev/null' }, claims('ana'), (input) => hmac('sha256', '', input)))
  await refused(t, routes, "kid '/dev/null', signed with a NUL byte", jws({ ...HS256, kid: '/dev/null' }, claims('ana'), (input) => hmac('sha256', '\0', input)))
  await refused(t, routes, 'kid with an SQL injection choosing the key', jws({ ...HS256, kid: "x' UNION SELECT 'key' --" }, claims('ana'), (input) => hmac('sha256', 'key', input)))
  await refused(t, routes, 'kid naming the package.json', jws({ ...HS256, kid: '../../package.json' }, claims('ana'), (input) => hmac('sha256', 'frb-tracer', input)))
  await refused(t, routes, 'crit naming an unknown extension', jws({ ...HS256, crit: ['exp'] }, claims('ana')))
})

t.test('claims: exp as a string, a float, enormous, negative; iat missing; iss wrong; user_id not a non-empty string', async (t) => {
  const routes = await setUp(t)
  const iat = now()
  // All signed with the real secret: the claims alone must refuse them, on refresh too (where
  // expiry is not checked but the claim types are).
  const cases: Record<string, object> = {
    'exp a string': claims('ana', { exp: String(iat + 600) }),
    'exp a float': claims('ana', { exp: iat + 600.5 }),
    'exp 1e300': claims('ana', { exp: 1e300 }),
    'exp 2^53': claims('ana', { exp: 2 ** 53 }),
    'exp negative': claims('ana', { exp: -1 }),
    'exp -1e300': claims('ana', { exp: -1e300 }),
    'exp null': claims('ana', { exp: null }),
    'exp an array': claims('ana', { exp: [iat + 600] }),
    'iat missing': { user_id: 'ana', exp: iat + 600, iss: TEST_ISSUER },
    'iat a string': claims('ana', { iat: String(iat) }),
    'iat a float': claims('ana', { iat: iat + 0.5 }),
    'iat negative': claims('ana', { iat: -1 }),
    'exp missing': { user_id: 'ana', iat, iss: TEST_ISSUER },
    'iss wrong': claims('ana', { iss: 'someone-else' }),
    'iss missing': { user_id: 'ana', exp: iat + 600, iat },
    'iss an array with ours': claims('ana', { iss: [TEST_ISSUER] }),
    'iss ours with a suffix': claims('ana', { iss: `${TEST_ISSUER} ` }),
    'user_id empty': claims('ana', { user_id: '' }),
    'user_id a number': claims('ana', { user_id: 7 }),
    'user_id an object': claims('ana', { user_id: { name: 'ana' } }),
    'user_id missing': { exp: iat + 600, iat, iss: TEST_ISSUER },
    'nbf in the future': claims('ana', { nbf: iat + 3600 })
  }
  for (const [name, payload] of Object.entries(cases)) await refused(t, routes, name, jws(HS256, payload))
  await refused(t, routes, 'payload a JSON array', jws(HS256, '[1,2,3]'))
  await refused(t, routes, 'payload a JSON string', jws(HS256, '"ana"'))
  await refused(t, routes, 'payload not JSON', jws(HS256, '{"user_id": "ana",'))
  await refused(t, routes, 'header not JSON', jws('{"alg":"HS256"', claims('ana')))
})

t.test('a token issued in the future beyond TOKEN_IAT_TOLERANCE_S (5 s) is refused; within it, or once its time comes, it passes', async (t) => {
  const routes = await setUp(t)
  const iat = now()
  await refused(t, routes, 'iat an hour ahead', jws(HS256, claims('ana', { iat: iat + 3600, exp: iat + 7200 })))
  await refused(t, routes, 'iat 10 s ahead', jws(HS256, claims('ana', { iat: iat + 10 })))
  t.strictSame((await call(routes, 'verify', jws(HS256, claims('ana', { iat: iat + 3600, exp: iat + 7200 })))).json(), {
    valid: false,
    reasons: ['The token was issued in the future (iat).'],
    exception: 'InvalidToken'
  })
  const slightlyAhead = jws(HS256, claims('ana', { iat: iat + 3 }))
  for (const route of ALL) t.equal((await call(routes, route, slightlyAhead)).statusCode, 200, `iat 3 s ahead (another instance's clock) on ${route}`)
  const strict = await build(t, { TOKEN_IAT_TOLERANCE_S: '0' })
  const { access_token } = await userWithTokens(strict, 'ana', 'reader')
  const [, payload] = access_token.split('.') as [string, string]
  const issued = JSON.parse(Buffer.from(payload, 'base64url').toString()) as { iat: number }
  const ahead = jws(HS256, claims('ana', { iat: issued.iat + 2 }))
  t.equal((await strict.inject({ url: '/auth/verify', headers: { authorization: ahead } })).statusCode, 401, 'with no tolerance, 2 s ahead is refused')
  // The refusal is not kept: the same token passes once the clock reaches its iat.
  const tokens = strict.tokens
  t.match(tokens.verify(ahead), { ok: false, reason: 'The token was issued in the future (iat).' })
  t.match(tokens.verify(ahead, { nowMs: (issued.iat + 2) * 1000 }), { ok: true, claims: { user_id: 'ana' } })
})

t.test('a token with a valid signature from another issuer (a service sharing the secret) is refused', async (t) => {
  const routes = await setUp(t)
  const staging = await build(t, { JWT_ISSUER: 'frb-tracer-staging' })
  const { access_token } = await userWithTokens(staging, 'ana', 'reader')
  t.equal((await staging.inject({ url: '/auth/verify', headers: { authorization: access_token } })).statusCode, 200, 'valid where it was issued')
  await refused(t, routes, 'token of the issuer frb-tracer-staging', access_token)
  t.strictSame((await call(routes, 'verify', access_token)).json().reasons, ['The token issuer is not accepted.'])
})

t.test('the expired token: 401 with the reason exactly "Signature has expired."; refresh accepts it by contract', async (t) => {
  const routes = await setUp(t)
  const expired = expiredToken('ana')
  const verify = await call(routes, 'verify', expired)
  t.equal(verify.statusCode, 401)
  t.strictSame(verify.json(), { valid: false, reasons: ['Signature has expired.'], exception: 'InvalidToken' })
  const read = await call(routes, 'read', expired)
  t.equal(read.statusCode, 401)
  t.strictSame(read.json(), { reasons: ['Signature has expired.'], exception: 'InvalidToken' })
  // CONTRACT 2: on POST /auth/refresh the access token "may be expired"; that is what refresh is for.
  const refresh = await call(routes, 'refresh', expired)
  t.equal(refresh.statusCode, 200, 'refresh takes an expired token of ours with the valid refresh token')
  t.strictSame(Object.keys(refresh.json()), ['access_token'])
  // Expired one second ago: no leeway (clockTolerance 0).
  const justExpired = jws(HS256, claims('ana', { iat: now() - 60, exp: now() - 1 }))
  t.strictSame((await call(routes, 'verify', justExpired)).json().reasons, ['Signature has expired.'], 'no leeway')
  // An expired token signed with another secret is still a forgery, also on refresh.
  await refused(t, routes, 'expired and signed with another secret', jws(HS256, claims('ana', { iat: now() - 7200, exp: now() - 3600 }), (input) => hmac('sha256', 'another-secret-that-is-32-bytes-long!', input)))
})

t.test('duplicate keys in the payload JSON text', async (t) => {
  // RFC 7519 section 4: a JWT parser MUST either reject duplicate claim names or use the lexically
  // last one (as JSON.parse does, and RFC 7515 section 5.2 the same for headers). Only the holder of
  // the secret can sign such a token, so accepting it is no forgery; what must not happen is that
  // one check reads one member and another check the other. Asserted: either the token is refused,
  // or every check (signature, expiry, issuer, identity on refresh) uses the last member.
  const routes = await setUp(t)
  const iat = now()
  const text = (first: string, last: string) => `{"user_id":${first},"exp":${iat + 600},"iat":${iat},"iss":"${TEST_ISSUER}","user_id":${last}}`

  const lastIsAna = jws(HS256, text('"mallory"', '"ana"'))
  const firstIsAna = jws(HS256, text('"ana"', '"mallory"'))
  const statuses = async (token: string) => Promise.all(ALL.map(async (route) => (await call(routes, route, token)).statusCode))
  const [lastVerify, lastRead, lastRefresh] = await statuses(lastIsAna)
  const [firstVerify, firstRead, firstRefresh] = await statuses(firstIsAna)
  const rejects = lastVerify === 401 && firstVerify === 401
  t.comment(`the service ${rejects ? 'rejects duplicate claims' : 'reads the last member'}: last=ana ${lastVerify}/${lastRead}/${lastRefresh}, first=ana ${firstVerify}/${firstRead}/${firstRefresh}`)
  if (rejects) {
    await refused(t, routes, 'duplicate user_id', lastIsAna)
    await refused(t, routes, 'duplicate user_id', firstIsAna)
  } else {
    t.strictSame([lastVerify, lastRead, lastRefresh], [200, 200, 200], 'last member ana: the refresh of ana works, so the identity is the last member')
    t.equal(firstRefresh, 401, 'first member ana: the refresh token of ana is not accepted for mallory')
    t.equal((await call(routes, 'refresh', firstIsAna)).json().exception, 'AuthenticationFailed')
    // The claim checks read the last member too.
    const expiredLast = jws(HS256, `{"user_id":"ana","exp":${iat + 600},"iat":${iat},"iss":"${TEST_ISSUER}","exp":${iat - 600}}`)
    t.strictSame((await call(routes, 'verify', expiredLast)).json().reasons, ['Signature has expired.'], 'exp: future then past is expired')
    const otherIssuerLast = jws(HS256, `{"user_id":"ana","exp":${iat + 600},"iat":${iat},"iss":"${TEST_ISSUER}","iss":"someone-else"}`)
    await refused(t, routes, 'iss: ours then another', otherIssuerLast)
    const noneLast = jws(`{"alg":"HS256","typ":"JWT","alg":"none"}`, claims('ana'))
    await refused(t, routes, 'header alg: HS256 then none', noneLast)
  }
  // Signed with a wrong secret, duplicate keys change nothing: refused.
  const wrong = (input: string) => hmac('sha256', 'another-secret-that-is-32-bytes-long!', input)
  await refused(t, routes, 'duplicate user_id, wrong secret', jws(HS256, text('"mallory"', '"ana"'), wrong))
  await refused(t, routes, 'duplicate user_id, wrong secret, reversed', jws(HS256, text('"ana"', '"mallory"'), wrong))
  await refused(t, routes, 'duplicate alg in the header, none last, wrong secret', jws('{"alg":"HS256","alg":"none"}', claims('ana'), wrong))
})

t.test('one bit flipped anywhere in the header, the payload or the signature', async (t) => {
  const routes = await setUp(t)
  const [header, payload, signature] = routes.realToken.split('.') as [string, string, string]
  const flips = (part: string) => {
    const bytes = Buffer.from(part, 'base64url')
    const out: { at: number; token: string }[] = []
    for (let at = 0; at < bytes.length * 8; at++) {
      const copy = Buffer.from(bytes)
      copy[at >> 3]! ^= 1 << (at & 7)
      out.push({ at, token: copy.toString('base64url') })
    }
    return out
  }
  const payloadFlips = flips(payload).map(({ token }) => `${header}.${token}.${signature}`)
  const headerFlips = flips(header).map(({ token }) => `${token}.${payload}.${signature}`)
  const signatureFlips = flips(signature).map(({ token }) => `${header}.${payload}.${token}`)
  // Every bit on verify; a few positions (first, middle and last byte, each bit) on all three routes.
  await allRefused(t, routes, 'payload bit flips', payloadFlips, ['verify'])
  await allRefused(t, routes, 'header bit flips', headerFlips, ['verify'])
  await allRefused(t, routes, 'signature bit flips', signatureFlips, ['verify'])
  const some = (tokens: string[]) => {
    const bytes = tokens.length / 8
    return [0, Math.floor(bytes / 2), bytes - 1].flatMap((byte) => tokens.slice(byte * 8, byte * 8 + 8))
  }
  await allRefused(t, routes, 'payload bit flips at three bytes', some(payloadFlips), ALL)
  await allRefused(t, routes, 'header bit flips at three bytes', some(headerFlips), ALL)
  // The user_id itself: every bit of "ana" in the payload, re-signed with a wrong secret.
  const text = Buffer.from(payload, 'base64url').toString()
  const start = text.indexOf('"ana"') + 1
  const renamed: string[] = []
  for (let at = start * 8; at < (start + 3) * 8; at++) {
    const bytes = Buffer.from(text)
    bytes[at >> 3]! ^= 1 << (at & 7)
    renamed.push(`${header}.${bytes.toString('base64url')}.${signature}`)
  }
  await allRefused(t, routes, 'user_id altered by one bit, original signature', renamed, ALL)
})

t.test('the signature in a non-canonical base64url form (the unused low bits of its last character set)', async (t) => {
  const routes = await setUp(t)
  // 32 bytes are 43 base64url characters: the last one carries 4 bits, and its 2 low bits must be 0.
  // A decoder that ignores them reads the same bytes from 3 other spellings of the same signature.
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
  const token = routes.realToken
  const last = alphabet.indexOf(token.at(-1)!)
  t.equal(last & 3, 0, 'the issued token is canonical')
  const respelled = [1, 2, 3].map((bits) => token.slice(0, -1) + alphabet[last | bits])
  for (const variant of respelled) {
    t.strictSame(Buffer.from(variant.split('.')[2]!, 'base64url'), Buffer.from(token.split('.')[2]!, 'base64url'), 'same bytes')
    await refused(t, routes, `last character ${variant.at(-1)} for ${token.at(-1)}`, variant)
  }
  for (const route of ALL) t.equal((await call(routes, route, token)).statusCode, 200, `the canonical token still passes ${route}`)
})

t.test('trailing garbage, extra dots and whitespace inside the token', async (t) => {
  const routes = await setUp(t)
  const token = routes.realToken
  const [h, p, s] = token.split('.') as [string, string, string]
  const variants: Record<string, string> = {
    'a character after the signature': `${token}x`,
    'padding after the signature': `${token}=`,
    'two paddings after the signature': `${token}==`,
    'a space and garbage after the signature': `${token} x`,
    'a dot after the signature': `${token}.`,
    'a fourth part': `${token}.${s}`,
    'two dots after the signature': `${token}..`,
    'a leading dot': `.${token}`,
    'a doubled first dot': `${h}..${p}.${s}`,
    'a doubled second dot': `${h}.${p}..${s}`,
    'only two parts': `${h}.${p}`,
    'a space inside the payload': `${h}.${p.slice(0, 5)} ${p.slice(5)}.${s}`,
    'a tab inside the header': `${h.slice(0, 3)}\t${h.slice(3)}.${p}.${s}`,
    'a space after a dot': `${h}. ${p}.${s}`,
    'a space inside the signature': `${h}.${p}.${s.slice(0, 10)} ${s.slice(10)}`,
    'padding inside the payload': `${h}.${p}=.${s}`,
    'standard base64 instead of base64url': token.replace(/-/g, '+').replace(/_/g, '/') + (token.includes('-') || token.includes('_') ? '' : '+'),
    'the payload percent-encoded': `${h}.${encodeURIComponent(Buffer.from(p, 'base64url').toString('base64'))}.${s}`,
    'Bearer twice': `Bearer Bearer ${token}`,
    'another scheme': `Basic ${token}`,
    'the token quoted': `"${token}"`
  }
  for (const [name, value] of Object.entries(variants)) await refused(t, routes, name, value)
  // Whitespace around the token and Bearer in any case are part of the header syntax, not the token.
  for (const fine of [`  ${token}  `, `Bearer ${token}`, `BEARER   ${token}`]) {
    t.equal((await call(routes, 'verify', fine)).statusCode, 200, JSON.stringify(fine.slice(0, 12)))
  }
})
