/**
 * What inject cannot send, over a real socket to the app listening on 127.0.0.1:0: duplicate
 * Authorization lines, a 1 MB token, methods the HTTP parser does not know, broken framing and
 * truncated bodies. Every answer is the envelope (or a 2xx), and the server keeps serving.
 */
import fc from 'fast-check'
import t from 'tap'
import type { Test } from 'tap'
import { expiredToken, signJwt, claims } from '../helper.js'
import { contractViolation, listen, rawAsAnswer, rawRequest, RUNS, SEED, securityApp, unknownViolation, type HostileRequest, type RawAnswer } from './hostile.js'

const secured = await securityApp(t)
const { app, writer, reader, writerRefresh } = secured
const port = await listen(app)

/** A request's text: the request line, `Host`, the given header lines, then the body with its length. */
function httpText(method: string, path: string, headerLines: string[], body?: string): string {
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close', ...headerLines]
  if (body !== undefined) lines.push('Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`)
  return `${lines.join('\r\n')}\r\n\r\n${body ?? ''}`
}

const asHostile = (method: string, url: string): HostileRequest => ({ method, url, headers: {} })

async function healthy(t: Test, label: string) {
  const health = await rawRequest(port, httpText('GET', '/health', []))
  t.equal(health.statusCode, 200, `${label}: GET /health over a socket answers 200`)
}

const check = (t: Test, method: string, path: string, raw: RawAnswer, label: string) => {
  t.equal(contractViolation(asHostile(method, path), rawAsAnswer(raw)), undefined, `${label}: ${raw.statusCode} ${raw.body.slice(0, 120)}`)
}

t.test('two or three Authorization lines are refused with 400, whatever they hold', async (t) => {
  // node:http keeps the first of repeated Authorization headers, and a proxy in front may read
  // the last: the service refuses the ambiguity instead of choosing.
  const forged = signJwt(claims('pipeline'), { secret: 'another-secret-that-is-32-bytes-long!' })
  const pool = [writer, `Bearer ${writer}`, reader, expiredToken('pipeline'), forged, 'garbage', '', 'a.b.c']
  const routes: [string, string, string | undefined][] = [
    ['GET', '/auth/verify', undefined],
    ['GET', '/v1/events?limit=1', undefined],
    ['POST', '/auth/refresh', JSON.stringify({ refresh_token: writerRefresh })],
    ['POST', '/v1/event-tracer/create-trace', JSON.stringify({ event: 3, site: 'chime' })]
  ]
  const names = ['Authorization', 'authorization', 'AUTHORIZATION']
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...routes),
      fc.array(fc.tuple(fc.constantFrom(...names), fc.constantFrom(...pool)), { minLength: 2, maxLength: 3 }),
      async ([method, path, body], lines) => {
        const answer = await rawRequest(port, httpText(method, path, lines.map(([name, value]) => `${name}: ${value}`), body))
        const violation = contractViolation(asHostile(method, path), rawAsAnswer(answer))
        if (violation !== undefined) throw new Error(violation)
        if (answer.statusCode !== 400) throw new Error(`${answer.statusCode} with ${lines.length} Authorization lines`)
        const envelope = JSON.parse(answer.body) as { reasons: string[]; exception: string }
        if (envelope.exception !== 'BadRequest' || envelope.reasons[0] !== 'header.authorization must be sent once') {
          throw new Error(`unexpected envelope ${answer.body}`)
        }
      }
    ),
    { seed: SEED, numRuns: RUNS(40) }
  )
  const one = await rawRequest(port, httpText('GET', '/auth/verify', [`Authorization: ${writer}`]))
  t.equal(one.statusCode, 200, 'one line is fine')
  await healthy(t, 'duplicate Authorization')
})

t.test('a 1 MB token is 431 RequestHeaderFieldsTooLarge from the HTTP parser, on every kind of route', async (t) => {
  const token = 'a'.repeat(1024 * 1024)
  const requests: [string, string, string | undefined][] = [
    ['GET', '/auth/verify', undefined],
    ['GET', '/v1/events', undefined],
    ['GET', '/v1/event-tracer/event-status/1', undefined],
    ['POST', '/auth/refresh', JSON.stringify({ refresh_token: writerRefresh })],
    ['POST', '/v1/events', '[]'],
    ['POST', '/auth', JSON.stringify({ username: 'pipeline', password: 'x' })]
  ]
  for (const [method, path, body] of requests) {
    for (const header of [`Authorization: ${token}`, `Authorization: Bearer ${token}`, `X-Padding: ${token}`]) {
      const raw = await rawRequest(port, httpText(method, path, [header], body))
      t.equal(raw.statusCode, 431, `${method} ${path} ${header.slice(0, 20)}`)
      t.strictSame(JSON.parse(raw.body), { reasons: ['The request headers are too large.'], exception: 'RequestHeaderFieldsTooLarge' })
    }
  }
  // Just over Node's default limit of 16 KiB for the whole head, and a long request line.
  const justOver = await rawRequest(port, httpText('GET', '/auth/verify', [`Authorization: ${'a'.repeat(17 * 1024)}`]))
  t.equal(justOver.statusCode, 431, '17 KiB token')
  const longUrl = await rawRequest(port, httpText('GET', `/v1/events?known_source_name=${'a'.repeat(20_000)}`, [`Authorization: ${reader}`]))
  t.equal(longUrl.statusCode, 431, 'a 20 KB query string counts towards the same limit')
  const manyHeaders = await rawRequest(port, httpText('GET', '/health', Array.from({ length: 3000 }, (_, i) => `X-${i}: 1`)))
  t.equal(manyHeaders.statusCode, 431, '3000 header lines')
  // inject has no HTTP parser: there the token reaches verification and is refused as a token.
  const injected = await app.inject({ url: '/auth/verify', headers: { authorization: token } })
  t.equal(injected.statusCode, 401, 'through inject: 401')
  t.equal(injected.json().exception, 'InvalidToken')
  await healthy(t, '1 MB token')
})

t.test('random methods over the socket: known ones reach the router, unknown ones are 400 from the parser', async (t) => {
  const paths = ['/health', '/auth', '/auth/verify', '/v1/events', '/v1/events/1', '/v1/event-tracer/create-trace', '/docs/static/x', '/nowhere']
  const methods = fc.oneof(
    fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'PROPFIND', 'SEARCH', 'MKCOL', 'LOCK', 'PURGE', 'QUERY', 'M-SEARCH', 'LINK'),
    fc.stringMatching(/^[A-Za-z][A-Za-z-]{0,11}$/),
    fc.constantFrom('get', 'Get', 'G ET', 'GET\t', 'GET/', '\u00c9T\u00c9', 'GETT', 'POSTS', '-')
  )
  const statuses = new Map<string, number>()
  await fc.assert(
    fc.asyncProperty(methods, fc.constantFrom(...paths), fc.boolean(), async (method, path, withToken) => {
      const raw = await rawRequest(port, httpText(method, path, withToken ? [`Authorization: ${reader}`] : []))
      statuses.set(`${raw.statusCode}`, (statuses.get(`${raw.statusCode}`) ?? 0) + 1)
      // The known bugs (hostile.ts) are tolerated here as in the inject properties.
      const violation = unknownViolation(asHostile(method, path), rawAsAnswer(raw))
      if (violation !== undefined) throw new Error(`${JSON.stringify(method)} ${path}: ${violation}`)
    }),
    { seed: SEED, numRuns: RUNS(80) }
  )
  t.comment(`statuses: ${JSON.stringify(Object.fromEntries(statuses))}`)
  const lower = await rawRequest(port, httpText('get', '/health', []))
  t.equal(lower.statusCode, 400, 'methods are case-sensitive: "get" is not HTTP')
  t.strictSame(JSON.parse(lower.body), { reasons: ['The request is not valid HTTP.'], exception: 'BadRequest' })
  // CONNECT has no listener: Node closes the connection without an answer. Nothing leaks; the server goes on.
  const tunnel = await rawRequest(port, 'CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n')
  t.equal(tunnel.text, '', 'CONNECT: the connection is closed without an answer')
  await healthy(t, 'random methods')
})

t.test('broken framing is 400 BadRequest in the envelope, written by the clientErrorHandler', async (t) => {
  const cases: Record<string, string | Buffer> = {
    'Content-Length and Transfer-Encoding (smuggling)': 'POST /auth HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    'two different Content-Length lines': 'POST /auth HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}',
    'a chunk size that is not hex': 'POST /auth HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
    'Content-Length not a number': 'POST /auth HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1x\r\n\r\n{}',
    'Content-Length negative': 'POST /auth HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: -1\r\n\r\n{}',
    'an obs-fold header': 'GET /health HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\n',
    'bare LF line ends': 'GET /health HTTP/1.1\nHost: x\n\n',
    'NUL in a header value': 'GET /health HTTP/1.1\r\nHost: x\r\nX-A: a\0b\r\n\r\n',
    'a header line without a colon': 'GET /health HTTP/1.1\r\nHost: x\r\nX-A\r\n\r\n',
    'CR LF injected in an Authorization value': `GET /auth/verify HTTP/1.1\r\nHost: x\r\nAuthorization: ${writer}\r\r\nX: y\r\n\r\n`,
    'a space in the path': 'GET /v1/ev ents HTTP/1.1\r\nHost: x\r\n\r\n',
    'the HTTP/2 preface': 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n',
    'a TLS ClientHello': Buffer.from([0x16, 0x03, 0x01, 0x00, 0xa5, 0x01, 0x00, 0x00, 0xa1, 0x03, 0x03]),
    'random bytes': Buffer.from(Array.from({ length: 64 }, (_, i) => (i * 73 + 11) % 256))
  }
  for (const [name, text] of Object.entries(cases)) {
    const raw = await rawRequest(port, text)
    t.equal(raw.statusCode, 400, name)
    t.strictSame(JSON.parse(raw.body || 'null'), { reasons: ['The request is not valid HTTP.'], exception: 'BadRequest' }, name)
  }
  // Forms Node accepts: absolute-form targets, HTTP/1.0 without Host, OPTIONS *.
  for (const [text, method, path] of [
    ['GET http://evil.example/health HTTP/1.1\r\nHost: x\r\n\r\n', 'GET', '/health'],
    ['GET /health HTTP/1.0\r\n\r\n', 'GET', '/health'],
    ['OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n', 'OPTIONS', '*'],
    ['GET /health HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n', 'GET', '/health']
  ] as const) {
    check(t, method, path, await rawRequest(port, text), text.split('\r\n')[0]!)
  }
  await healthy(t, 'broken framing')
})

t.test('truncated bodies: the connection half-closes before Content-Length bytes arrived', async (t) => {
  const bodies: [string, string, string][] = [
    ['POST', '/auth', JSON.stringify({ username: 'pipeline', password: 'pipeline-password' })],
    ['POST', '/auth/refresh', JSON.stringify({ refresh_token: writerRefresh })],
    ['POST', '/v1/events', JSON.stringify([{ event_no: 9, timestamp_utc: '2024-05-01T10:00:00Z', snr: 10, known_source_name: 'EXT' }])],
    ['POST', '/v1/event-tracer/create-trace', JSON.stringify({ event: 9, site: 'chime' })],
    ['POST', '/v1/event-tracer/update-trace', JSON.stringify({ event: 9, site: 'kko', stage: 'baseband_conversion', status: 'complete' })],
    ['PUT', '/v1/event-tracer/datatrail/9/intensity', JSON.stringify({ registered: true, should_be_at_minoc: false, larger_dataset: {}, data_path: '', num_files: 0, missing_files: [] })],
    ['POST', '/v1/event-tracer/heartbeats', '[{"event_no":9}]']
  ]
  const answered = new Map<string, number>()
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(...bodies), fc.double({ min: 0, max: 0.999, noNaN: true }), fc.integer({ min: 1, max: 1000 }), async ([method, path, body], cut, missing) => {
      const sent = body.slice(0, Math.floor(body.length * cut))
      const head = [`${method} ${path} HTTP/1.1`, 'Host: x', `Authorization: ${writer}`, 'Content-Type: application/json', `Content-Length: ${Buffer.byteLength(sent) + missing}`]
      const raw = await rawRequest(port, `${head.join('\r\n')}\r\n\r\n${sent}`, { halfClose: true })
      answered.set(`${raw.statusCode}`, (answered.get(`${raw.statusCode}`) ?? 0) + 1)
      // The client is gone: no answer at all is fine; an answer must be the 400 envelope.
      if (raw.text === '') return
      if (raw.statusCode !== 400) throw new Error(`${method} ${path}: ${raw.statusCode} ${raw.body}`)
      const violation = contractViolation(asHostile(method, path), rawAsAnswer(raw))
      if (violation !== undefined) throw new Error(violation)
    }),
    { seed: SEED, numRuns: RUNS(30) }
  )
  t.comment(`statuses: ${JSON.stringify(Object.fromEntries(answered))}`)
  t.equal((await app.inject({ url: '/v1/events/9', headers: { authorization: reader } })).statusCode, 404, 'no truncated write was stored')
  await healthy(t, 'truncated bodies')
})

t.test('answers Node writes itself, before Fastify and the clientErrorHandler, still get the envelope', async (t) => {
  // node:http would write both itself with an empty body: without Host (requireHostHeader) and an
  // Expect other than 100-continue (without a checkExpectation listener).
  const noHost = await rawRequest(port, 'GET /health HTTP/1.1\r\nConnection: close\r\n\r\n')
  t.equal(noHost.statusCode, 400, 'HTTP/1.1 without Host is 400')
  t.match(noHost.headers['content-type'] ?? '', /^application\/json/, 'without Host: JSON')
  t.equal(safeJson(noHost.body)?.exception, 'BadRequest', 'without Host: the envelope')

  const expect = await rawRequest(port, httpText('POST', '/auth', ['Expect: 999-nope'], '{}'))
  t.equal(expect.statusCode, 417, 'an unknown Expect is 417 Expectation Failed')
  t.match(expect.headers['content-type'] ?? '', /^application\/json/, 'Expect: JSON')
  t.ok(safeJson(expect.body)?.reasons, 'Expect: the envelope')
  await healthy(t, 'answers of node:http')
})

function safeJson(text: string): { reasons?: unknown; exception?: unknown } | undefined {
  try {
    return JSON.parse(text) as { reasons?: unknown; exception?: unknown }
  } catch {
    return undefined
  }
}
