/**
 * Shared material of the security suites: the production app with the list of its routes, the
 * check every answer must pass (CONTRACT section 1), hostile values for fast-check, and raw HTTP.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import fc from 'fast-check'
import Fastify, { type FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { appPlugin, serverOptions } from '../../src/app.js'
import { loadConfig, type ConfigInput } from '../../src/config.js'
import { urlsOf } from '../../src/infrastructure/http/error-handler.js'
import { openStore } from '../../src/store/open.js'
import { builtDashboardFixture } from '../dashboard/assets.js'
import { expiredToken, TEST_SECRET, userWithTokens } from '../helper.js'

/** One seed for every property of the security suites; FC_SEED=... replays another run. */
export const SEED = Number(process.env.FC_SEED ?? 20251122)
/** FC_RUNS=<factor> multiplies every number of runs, for a longer exploration than the suite's. */
export const RUNS = (runs: number) => Math.max(1, Math.round(runs * Number(process.env.FC_RUNS ?? 1)))

export interface Route {
  method: string
  url: string
}

export interface SecurityApp {
  app: FastifyInstance
  /** Every (method, url) the app answers, as Fastify registered them (HEAD routes included). */
  routes: Route[]
  writer: string
  reader: string
  writerRefresh: string
  readerRefresh: string
}

/**
 * The production app (the same server options and plugin as buildApp) with an onRoute hook that
 * records every route before the app registers any: a route added later cannot escape the suites.
 * The login and refresh rate limits are raised so that their bodies reach the parser and the handler.
 */
export async function securityApp(t: Test, env: ConfigInput = {}): Promise<SecurityApp> {
  const unlimited = { AUTH_RATE_LIMIT: '1000000', AUTH_USER_FAILURE_LIMIT: '1000000', REFRESH_RATE_LIMIT: '1000000' }
  // A folder of its own, not t.testdir(): the suites of this group open apps on tap's root test,
  // whose one test folder each such call would empty under the others.
  const dir = mkdtempSync(join(tmpdir(), 'frb-security-'))
  const config = loadConfig({ TRACER_DB: join(dir, 'tracer.sqlite'), JWT_SECRET: TEST_SECRET, LOG_LEVEL: 'silent', ...unlimited, ...env })
  const app = Fastify(serverOptions(config))
  const seen = new Set<string>()
  const routes: Route[] = []
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      for (const url of urlsOf(route)) {
        const key = `${method} ${url}`
        if (!seen.has(key)) routes.push({ method, url })
        seen.add(key)
      }
    }
  })
  // The dashboard's routes serve a stand-in build, so these suites do not depend on `npm run build`.
  await app.register(appPlugin, { config, store: await openStore(config), dashboardRoot: builtDashboardFixture(t) })
  await app.ready()
  t.teardown(async () => {
    await app.close()
    rmSync(dir, { recursive: true, force: true })
  })
  const writerPair = await userWithTokens(app, 'pipeline', 'writer')
  const readerPair = await userWithTokens(app, 'operator', 'reader')
  return {
    app,
    routes,
    writer: writerPair.access_token,
    reader: readerPair.access_token,
    writerRefresh: writerPair.refresh_token,
    readerRefresh: readerPair.refresh_token
  }
}

/** A request as the suites generate it; `payload` is sent byte for byte. */
export interface HostileRequest {
  method: string
  url: string
  headers: Record<string, string>
  payload?: string | Buffer
}

export interface Answer {
  statusCode: number
  headers: Record<string, string | string[] | number | undefined>
  body: string
}

/** The exceptions each status may carry (CONTRACT section 1). */
const exceptionsByStatus: Record<number, readonly string[]> = {
  400: ['BadRequest'],
  401: ['Unauthorized', 'InvalidToken', 'AuthenticationFailed'],
  403: ['Forbidden'],
  404: ['NotFound'],
  405: ['MethodNotAllowed'],
  408: ['RequestTimeout'],
  413: ['PayloadTooLarge'],
  415: ['UnsupportedMediaType'],
  429: ['TooManyRequests'],
  431: ['RequestHeaderFieldsTooLarge']
}

const pathOf = (url: string) => url.split('?', 1)[0] ?? url

/** Pages for browsers rather than API: the interactive docs, and the dashboard with `/` leading to it. */
const isPage = (path: string) => path.startsWith('/docs') || path === '/' || path === '/dashboard' || path.startsWith('/dashboard/')

/** The path the router sees: inject resolves dot segments (`/%2e%2e/docs` is `/docs`) as a URL parser does. */
function normalizedPath(url: string): string {
  try {
    return new URL(pathOf(url), 'http://127.0.0.1').pathname
  } catch {
    return pathOf(url)
  }
}

/**
 * Why `answer` breaks the contract, or undefined when it keeps it: a 2xx, or a 4xx whose body is
 * exactly the envelope with the exception of its status (plus `valid: false` on a 401 from GET
 * /auth/verify). Never a 5xx, never a stack. Redirects and 304 only from the static docs and the
 * dashboard's pages.
 */
export function contractViolation(request: HostileRequest, answer: Answer): string | undefined {
  const { statusCode } = answer
  const path = normalizedPath(request.url)
  if (statusCode >= 200 && statusCode < 300) {
    // The API answers JSON (the docs, the dashboard and /metrics are pages and text).
    if (request.method === 'HEAD' || statusCode === 204 || isPage(path) || path === '/metrics') return undefined
    // The live stream: server-sent events, which open with a comment line.
    if (String(answer.headers['content-type']).startsWith('text/event-stream')) {
      return answer.body.startsWith(': ') ? undefined : `an event stream that opens with ${JSON.stringify(answer.body.slice(0, 100))}`
    }
    try {
      JSON.parse(answer.body)
      return undefined
    } catch {
      return `${statusCode} with a body that is not JSON: ${answer.body.slice(0, 200)}`
    }
  }
  if (statusCode >= 300 && statusCode < 400) {
    return isPage(path) ? undefined : `${statusCode} outside the docs and the dashboard`
  }
  if (/\n\s+at .+\(|node_modules|\.[jt]s:\d+/.test(answer.body)) return `a stack trace or source path leaked: ${answer.body.slice(0, 300)}`
  if (statusCode >= 500) return `${statusCode}: ${answer.body.slice(0, 300)}`
  // Static files (docs, dashboard) honour Range and preconditions: an unsatisfiable one is 416 or 412.
  const staticStatus = isPage(path) && (statusCode === 412 || statusCode === 416)
  const allowed = staticStatus ? ['BadRequest'] : exceptionsByStatus[statusCode]
  if (allowed === undefined) return `status ${statusCode} is not one the contract knows`
  const type = String(answer.headers['content-type'] ?? '')
  if (!type.startsWith('application/json')) return `${statusCode} with content-type ${type}`
  if (request.method === 'HEAD') return answer.body === '' ? undefined : 'a HEAD answer with a body'
  let body: unknown
  try {
    body = JSON.parse(answer.body)
  } catch {
    return `${statusCode} with a body that is not JSON: ${answer.body.slice(0, 200)}`
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return `${statusCode} body is not an object`
  const envelope = body as Record<string, unknown>
  const verify401 = statusCode === 401 && path === '/auth/verify' && request.method === 'GET'
  const expectedKeys = verify401 ? 'exception,reasons,valid' : 'exception,reasons'
  const keys = Object.keys(envelope).sort().join()
  if (keys !== expectedKeys) return `${statusCode} body has keys ${keys}, expected ${expectedKeys}: ${answer.body.slice(0, 200)}`
  if (verify401 && envelope.valid !== false) return 'a 401 from /auth/verify without valid: false'
  const { reasons, exception } = envelope
  if (!Array.isArray(reasons) || reasons.length === 0 || !reasons.every((r) => typeof r === 'string' && r !== '')) {
    return `reasons is not a non-empty array of strings: ${JSON.stringify(reasons)}`
  }
  if (typeof exception !== 'string') return 'exception is not a string'
  const onVerify = path === '/auth/verify' && request.method === 'GET'
  const allowedHere = statusCode === 400 && onVerify ? ['BadRequest', 'Unauthorized'] : allowed
  if (!allowedHere.includes(exception)) return `${statusCode} carries ${exception}; expected one of ${allowedHere.join(', ')}`
  if (statusCode === 401 && onVerify && exception !== 'InvalidToken') return `401 ${exception} on /auth/verify`
  if (exception === 'Unauthorized' && reasons[0] !== 'Authorization header not present.') return `Unauthorized with reasons ${JSON.stringify(reasons)}`
  if (statusCode === 405) {
    const allow = String(answer.headers.allow ?? '')
    if (allow === '') return '405 without Allow'
    if (allow.split(/,\s*/).includes(request.method)) return `405 for ${request.method} though Allow says ${allow}`
  }
  if (statusCode === 429 && answer.headers['retry-after'] === undefined) return '429 without Retry-After'
  return undefined
}

/** contractViolation, as the property suites call it. */
export const unknownViolation = contractViolation

/** Throws (for fast-check) when the answer breaks the contract and is not a known bug. */
export function assertAnswer(request: HostileRequest, answer: Answer) {
  const violation = unknownViolation(request, answer)
  if (violation !== undefined) throw new Error(`${request.method} ${request.url.slice(0, 200)} -> ${violation}`)
}

/**
 * Sends a request and reads its answer. The body is read as a stream: an event stream never ends
 * by itself, so of one only what it sends first is read before the client leaves.
 */
export async function send(app: FastifyInstance, request: HostileRequest): Promise<Answer> {
  const response = await app.inject({
    method: request.method,
    url: request.url,
    headers: request.headers,
    payloadAsStream: true,
    ...(request.payload === undefined ? {} : { payload: request.payload })
  })
  const eventStream = String(response.headers['content-type']).startsWith('text/event-stream')
  const body = eventStream ? await firstChunk(response.stream()) : await wholeText(response.stream())
  if (eventStream) response.raw.res.destroy()
  return { statusCode: response.statusCode, headers: response.headers, body }
}

async function wholeText(body: Readable): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of body) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

/** The first chunk of a body, or nothing when it ends without one (an answer to HEAD). */
const firstChunk = (body: Readable) =>
  new Promise<string>((resolve, reject) => {
    body.once('data', (chunk: Buffer) => resolve(chunk.toString('utf8')))
    body.once('end', () => resolve(''))
    body.once('error', reject)
  })

// ---------------------------------------------------------------------------------------------
// JSON text with what JSON.stringify cannot write: raw tokens (NaN, 1e400), duplicate keys.

/** Raw JSON text, written as it is. */
export class Raw {
  constructor(readonly text: string) {}
}

/** An object as a list of members: keys may repeat and may be `__proto__`. */
export class Obj {
  constructor(readonly entries: [string, unknown][]) {}
}

export function jsonText(value: unknown): string {
  if (value instanceof Raw) return value.text
  if (value instanceof Obj) return `{${value.entries.map(([key, member]) => `${JSON.stringify(key)}:${jsonText(member)}`).join(',')}}`
  if (Array.isArray(value)) return `[${value.map(jsonText).join(',')}]`
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value).map(([key, member]) => `${JSON.stringify(key)}:${jsonText(member)}`).join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

// ---------------------------------------------------------------------------------------------
// Hostile values.

export const LONE_SURROGATES = ['\ud800', '\udfff', 'a\ud800b', '\udc00\ud800', '\ud83d']

/** Numbers only JSON text can carry, and numbers at the edges of every range the service checks. */
export const numberTokens = [
  'NaN', 'Infinity', '-Infinity', '1e400', '-1e400', '1e-400', '-0', '0x10', '01', '+1', '.5', '1.', '1e', '--1',
  '9007199254740992', '9007199254740993', '18446744073709551616', '1e21', '1.0', '12.5', '-1', '-9007199254740991',
  '123456789012345678901234567890'
]

export const hostileScalar: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(...numberTokens.map((text) => new Raw(text))),
  fc.constantFrom(
    new Raw('undefined'), new Raw("'single'"), new Raw('"\\ud800"'), new Raw('"\\udfff\\ud800"'), new Raw('"\\u0000"'),
    new Raw('"\\x41"'), new Raw('"a'), new Raw('true false'), new Raw('[1,]'), new Raw('{"a":1,}'), new Raw('/* c */1')
  ),
  fc.constantFrom(-1, -0.5, 0.5, 1.5, 2 ** 53, 2 ** 53 + 2, -(2 ** 53), 1e300, -1e300, Number.MAX_VALUE, Number.MIN_VALUE, 2 ** 32, -(2 ** 31) - 1),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.constantFrom(...LONE_SURROGATES),
  fc.constantFrom('', ' ', '12', '1e3', '-1', '1.5', 'true', 'null', '__proto__', 'constructor', 'prototype', '\u0000', '\n'),
  fc.constantFrom(1_000, 70_000, 300_000).map((length) => 'x'.repeat(length)),
  fc.constantFrom(20_000, 100_000).map((length) => '\u00e9\ud83d\ude00'.repeat(length / 3)),
  fc.constant([]),
  fc.constant({}),
  fc.jsonValue({ maxDepth: 2 })
)

/** `__proto__` and `constructor` members, at the top or nested, as a JSON parser sees them. */
export const poison: fc.Arbitrary<[string, unknown]> = fc.constantFrom<[string, unknown]>(
  ['__proto__', new Obj([['polluted', true]])],
  ['__proto__', new Obj([['user_id', 'admin'], ['role', 'admin']])],
  ['__proto__', null],
  ['constructor', new Obj([['prototype', new Obj([['polluted', true]])]])],
  ['constructor', 'x'],
  ['prototype', new Obj([['polluted', true]])]
)

/** Deep nesting: V8's JSON.parse is iterative, but anything that walks the result may not be. */
export const deepNesting: fc.Arbitrary<Raw> = fc
  .tuple(fc.constantFrom(100, 1_000, 10_000, 100_000), fc.constantFrom('[', '{"a":', '{"__proto__":', '[{"a":'))
  .map(([depth, open]) => {
    const close = open === '[' ? ']' : open === '[{"a":' ? '}]' : '}'
    return new Raw(open.repeat(depth) + '1' + close.repeat(depth))
  })

type Mutation = { kind: 'replace' | 'delete' | 'duplicate' | 'extra' | 'poison' | 'nestedPoison'; at: number; value: unknown; key: string; member: [string, unknown] }

const mutation: fc.Arbitrary<Mutation> = fc.record({
  kind: fc.constantFrom('replace', 'replace', 'replace', 'delete', 'duplicate', 'extra', 'poison', 'nestedPoison'),
  at: fc.nat(),
  value: hostileScalar,
  key: fc.oneof(fc.string({ maxLength: 10 }), fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', '')),
  member: poison
})

/** A valid object with one to three hostile changes to its members. */
export function mutated(valid: fc.Arbitrary<Record<string, unknown>>): fc.Arbitrary<Obj> {
  return fc.tuple(valid, fc.array(mutation, { minLength: 1, maxLength: 3 })).map(([record, changes]) => {
    let entries = Object.entries<unknown>(record)
    for (const change of changes) {
      const index = entries.length === 0 ? 0 : change.at % entries.length
      const target = entries[index]
      switch (change.kind) {
        case 'replace':
          if (target !== undefined) entries[index] = [target[0], change.value]
          break
        case 'delete':
          entries = entries.filter((_, i) => i !== index)
          break
        case 'duplicate':
          if (target !== undefined) entries.push([target[0], change.value])
          break
        case 'extra':
          entries.push([change.key, change.value])
          break
        case 'poison':
          entries.splice(index, 0, change.member)
          break
        case 'nestedPoison':
          if (target !== undefined) entries[index] = [target[0], new Obj([change.member, ['value', target[1]]])]
          break
      }
    }
    return new Obj(entries)
  })
}

/** Body text of a JSON body route: mostly valid-shaped records with hostile changes. */
export function jsonBodies(valid: fc.Arbitrary<unknown>, mutatedBody: fc.Arbitrary<unknown>): fc.Arbitrary<string | Buffer> {
  const text = fc.oneof(
    { weight: 4, arbitrary: valid.map(jsonText) },
    { weight: 6, arbitrary: mutatedBody.map(jsonText) },
    { weight: 1, arbitrary: fc.jsonValue().map((value) => JSON.stringify(value)) },
    { weight: 1, arbitrary: hostileScalar.map(jsonText) },
    { weight: 1, arbitrary: deepNesting.map(jsonText) },
    { weight: 1, arbitrary: fc.tuple(poison, valid).map(([member, body]) => jsonText(new Obj([member, ...Object.entries(body as object)]))) }
  )
  return fc.oneof(
    { weight: 8, arbitrary: text },
    // Truncated: a prefix of a body, cut anywhere.
    { weight: 2, arbitrary: fc.tuple(text, fc.double({ min: 0, max: 1, noNaN: true })).map(([body, cut]) => body.slice(0, Math.floor(body.length * cut))) },
    // Bytes that are not UTF-8 in a string (a lone surrogate as UTF-8 would write it).
    { weight: 1, arbitrary: text.map((body) => Buffer.concat([Buffer.from(body.slice(0, -2)), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from(body.slice(-2))])) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)) },
    { weight: 1, arbitrary: fc.constantFrom('', ' ', '\n', 'null', '[]', '{}', '""', '\ufeff{}') }
  )
}

/** Values of an `event_no` in JSON: valid, and every way to be wrong. */
export const eventNoValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 20 }) },
  { weight: 1, arbitrary: fc.maxSafeNat() },
  {
    weight: 3,
    arbitrary: fc.oneof(
      fc.constantFrom(-1, -0.5, 0.5, 1.5, 2 ** 53, 2 ** 53 + 2, 1e300, -1e300, Number.MAX_VALUE, Number.MIN_VALUE),
      fc.constantFrom(...['NaN', 'Infinity', '-Infinity', '1e400', '-1e400', '-0', '1.0', '1e2'].map((text) => new Raw(text))),
      fc.constantFrom('1', '0', '-1', '1e3', '9007199254740993', '', 'NaN', true, false, null, [1], { event_no: 1 })
    )
  }
)

/** Text of an event_no in a path. */
export const eventNoText: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 20 }).map(String) },
  { weight: 1, arbitrary: fc.maxSafeNat().map(String) },
  {
    weight: 4,
    arbitrary: fc.oneof(
      fc.constantFrom(
        '-1', '-0', '1.5', '1.0', '1e3', '1e400', '0x10', '00', '01', '+1', ' 1', '9007199254740991', '9007199254740992',
        '99999999999999999999', 'NaN', 'Infinity', '-Infinity', '', '%00', '..', '.', '1;2', '1%2F2', '%EF%BC%91',
        '__proto__', 'constructor', '%ED%A0%80', '%ZZ', '%', '1 2', '1%0A2'
      ),
      fc.integer({ min: -1_000_000, max: -1 }).map(String),
      fc.double({ noNaN: true }).map(String),
      fc.constantFrom(17, 100, 101, 500).map((length) => '9'.repeat(length)),
      fc.string({ maxLength: 20 }).map((text) => safeEncode(text))
    )
  }
)

/** Percent-encoding that also writes lone surrogates (as the bytes a WTF-8 encoder would). */
export function safeEncode(text: string): string {
  try {
    return encodeURIComponent(text)
  } catch {
    return [...text]
      .map((char) => {
        try {
          return encodeURIComponent(char)
        } catch {
          const code = char.charCodeAt(0)
          return [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)]
            .map((byte) => `%${byte.toString(16).toUpperCase()}`)
            .join('')
        }
      })
      .join('')
  }
}

/** Time bounds: every accepted form, and near misses. */
export const timeText: fc.Arbitrary<string> = fc.oneof(
  fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }).map((date) => date.toISOString()),
  fc.constantFrom(
    '2024-05-01', '2024-05-01T10:00', '2024-05-01T10:00:00', '2024-05-01T10:00:00.123456789Z', '2024-05-01T10:00:00+02:00',
    '2024-05-01T10:00:00-23:59', '2024-02-29', '2024-02-30', '2023-02-29', '2024-13-01', '2024-00-10', '2024-01-32', '99999-01-01',
    '0000-01-01', '0001-01-01', '9999-12-31T23:59:59.999-23:59', '1970-01-01', '1969-12-31T23:59:59Z', '2024-05-01T24:00',
    '2024-05-01T23:60', '2024-05-01T23:59:60', '2024-05-01T10:00:00.1234567890Z', '2024-05-01T10:00+24:00', '2024-05-01T10:00+99:99',
    '2024-05-01T10:00:00z', '2024-05-01 10:00:00', '2024-5-1', '20240501', '2024-05-01T10:00:00Z ', '-002024-05-01', '+002024-05-01',
    'yesterday', 'now', '1714557600', '1714557600000', '', 'NaN'
  ),
  fc.string({ maxLength: 40 })
)

/** Printable ASCII, what a header value may hold on the wire. */
export const headerText = (maxLength = 40) =>
  fc.string({ unit: 'binary-ascii', maxLength }).map((text) => text.replace(/[^\x20-\x7e]/g, '').trim())

export const contentTypes: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 12, arbitrary: fc.constant('application/json') },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      undefined, 'application/json; charset=utf-8', 'Application/JSON', 'application/x-ndjson', 'text/plain', 'application/xml',
      'multipart/form-data; boundary=----x', 'application/x-www-form-urlencoded', '', ';', 'application/json;;;', 'application/json; charset=utf-16',
      'application/json; charset=latin1', 'application/jsonx', 'application/json-patch+json', 'application/problem+json', '*/*', 'json',
      'application/json, text/plain', 'application/json; boundary="', 'application/x-ndjson; charset=utf-8'
    )
  },
  { weight: 1, arbitrary: headerText() }
)

/** Extra headers a client or an attacker may add. */
export const extraHeaders: fc.Arbitrary<Record<string, string>> = fc
  .array(
    fc.tuple(
      fc.oneof(
        fc.constantFrom(
          'if-none-match', 'if-match', 'if-modified-since', 'if-unmodified-since', 'range', 'accept', 'accept-encoding', 'content-encoding',
          'accept-version', 'origin', 'x-forwarded-for', 'x-forwarded-host', 'x-http-method-override', 'expect', 'cookie', 'x-request-id'
        ),
        fc.stringMatching(/^x-[a-z]{1,10}$/)
      ),
      fc.oneof(
        fc.constantFrom('*', '"x"', 'bytes=999999-', 'bytes=0-1', 'bytes=1-0', 'bytes=0-1,2-3', 'Wed, 21 Oct 1990 07:28:00 GMT', 'Wed, 21 Oct 2099 07:28:00 GMT', 'gzip', 'deflate', 'DELETE', '100-continue', '1.0.0', 'null'),
        headerText()
      )
    ),
    { maxLength: 3 }
  )
  .map((pairs) => Object.fromEntries(pairs))

/** Authorization headers: the service's tokens, none, and every kind of garbage. */
export function authorizations(tokens: { writer: string; reader: string }): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(tokens.writer, `Bearer ${tokens.writer}`) },
    { weight: 3, arbitrary: fc.constantFrom(tokens.reader, `bearer\t${tokens.reader}`) },
    { weight: 1, arbitrary: fc.constant(undefined) },
    {
      weight: 2,
      arbitrary: fc.oneof(
        fc.constantFrom('', '   ', 'Bearer', 'Bearer ', 'Basic dXNlcjpwYXNz', 'null', 'undefined', 'a.b.c', '..', expiredToken('pipeline'),
          `${tokens.writer}x`, `${tokens.writer}.`, tokens.writer.split('.').slice(0, 2).join('.'), `Bearer Bearer ${tokens.writer}`),
        headerText(200),
        fc.constantFrom(8 * 1024, 100 * 1024).map((length) => 'a'.repeat(length))
      )
    }
  )
}

export function requestHeaders(
  authorization: string | undefined,
  contentType: string | undefined,
  extra: Record<string, string>
): Record<string, string> {
  const headers: Record<string, string> = { ...extra }
  if (authorization !== undefined) headers.authorization = authorization
  if (contentType !== undefined) headers['content-type'] = contentType
  return headers
}

/** A query string of hostile and valid parameters: known keys, unknown and poisoned ones, repeats, broken escapes. */
export function queryStrings(known: Record<string, fc.Arbitrary<string>>): fc.Arbitrary<string> {
  const names = Object.keys(known)
  const value = fc.oneof(
    { weight: 2, arbitrary: fc.string({ maxLength: 20 }) },
    { weight: 2, arbitrary: fc.constantFrom(...numberTokens, '', 'true', 'false', '1', '0', 'asc', 'desc', ...LONE_SURROGATES) },
    { weight: 1, arbitrary: fc.constantFrom(3_000, 10_000).map((length) => 'q'.repeat(length)) }
  )
  const pair: fc.Arbitrary<string> = fc.oneof(
    ...(names.length === 0
      ? []
      : [
          { weight: 6, arbitrary: fc.constantFrom(...names).chain((name) => fc.oneof(known[name]!, value).map((v) => `${name}=${safeEncode(v)}`)) },
          { weight: 1, arbitrary: fc.constantFrom(...names).chain((name) => value.map((v) => `${name}=${v.replace(/[#\s]/g, '')}`)) }
        ]),
    { weight: 1, arbitrary: fc.constantFrom('__proto__[polluted]=1', 'constructor[prototype][polluted]=1', '__proto__=1', 'constructor=1', 'hasOwnProperty=1', 'toString=1') },
    { weight: 1, arbitrary: fc.constantFrom('event_no=-1', 'event_no=1.5', 'event_no=1e400', 'event_no=9007199254740993', 'event=NaN', 'event_no=') },
    { weight: 1, arbitrary: fc.tuple(fc.string({ maxLength: 10 }), value).map(([name, v]) => `${safeEncode(name)}=${safeEncode(v)}`) },
    { weight: 1, arbitrary: fc.constantFrom('%', '%Z', '%ZZ=1', 'a=%ED%A0%80', 'a=%C0%AF', 'a=%00', '=', '&', '==', 'a', 'a=1=2', '%E0%A4%A') }
  )
  // Mostly the route's own parameters with plausible values, then hostile pairs on top.
  const own =
    names.length === 0
      ? fc.constant<string[]>([])
      : fc
          .oneof(fc.constant(names), fc.subarray(names))
          .chain((chosen) => fc.tuple(...chosen.map((name) => known[name]!.map((v) => `${name}=${safeEncode(v)}`))))
  return fc
    .oneof(
      { weight: 3, arbitrary: own },
      { weight: 3, arbitrary: fc.tuple(own, fc.array(pair, { minLength: 1, maxLength: 4 })).map(([a, b]) => [...a, ...b]) },
      { weight: 2, arbitrary: fc.array(pair, { maxLength: 6 }) }
    )
    .map((pairs) => (pairs.length === 0 ? '' : `?${pairs.join('&')}`))
}

/** Whatever is left on Object.prototype: a prototype pollution anywhere in the process shows here. */
export const prototypeKeys = () => Object.getOwnPropertyNames(Object.prototype).sort().join()

// ---------------------------------------------------------------------------------------------
// Raw HTTP over a socket: what inject cannot send (duplicate headers, oversized headers, bad framing).

export interface RawAnswer {
  /** Everything the server wrote before closing. */
  text: string
  statusCode: number | undefined
  headers: Record<string, string>
  body: string
}

export async function listen(app: FastifyInstance): Promise<number> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  return (app.server.address() as { port: number }).port
}

/**
 * Writes `request` on a new connection and collects the answer until the server closes it (the
 * requests of the suites say `Connection: close`; a connection left open is dropped after 500 ms of
 * silence). `halfClose` ends the client's side right after writing: node:http then treats the
 * client as gone and aborts what it has not answered yet, which only the truncated-body tests want.
 * Errors writing (the server may stop reading early, as for a 431) are ignored.
 */
export function rawRequest(port: number, request: string | Buffer, { halfClose = false } = {}): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true }, () => {
      if (halfClose) socket.end(request)
      else socket.write(request)
    })
    socket.setTimeout(500, () => socket.destroy())
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    // The server closed its side: the answer is complete.
    socket.on('end', () => socket.end())
    socket.on('error', () => {})
    socket.on('close', () => resolve(parseRaw(Buffer.concat(chunks).toString('latin1'))))
  })
}

export function parseRaw(text: string): RawAnswer {
  const end = text.indexOf('\r\n\r\n')
  const head = end === -1 ? text : text.slice(0, end)
  const [statusLine = '', ...lines] = head.split('\r\n')
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine)
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(':')
    if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim()
  }
  let body = end === -1 ? '' : text.slice(end + 4)
  if (headers['transfer-encoding'] === 'chunked') body = unchunk(body)
  return { text, statusCode: status === null ? undefined : Number(status[1]), headers, body: Buffer.from(body, 'latin1').toString('utf8') }
}

function unchunk(text: string): string {
  let out = ''
  let rest = text
  for (;;) {
    const lineEnd = rest.indexOf('\r\n')
    if (lineEnd === -1) return out
    const size = parseInt(rest.slice(0, lineEnd), 16)
    if (!(size > 0)) return out
    out += rest.slice(lineEnd + 2, lineEnd + 2 + size)
    rest = rest.slice(lineEnd + 2 + size + 2)
  }
}

/** The raw answer as an Answer for contractViolation (a missing status line is a violation). */
export function rawAsAnswer(raw: RawAnswer): Answer {
  return { statusCode: raw.statusCode ?? 0, headers: raw.headers, body: raw.body }
}
