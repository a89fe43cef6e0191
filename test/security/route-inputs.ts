/**
 * A generator of hostile requests for every route of the app, keyed by the route's URL template.
 * hostile-input.ts fails when the app has a route this table does not know: add it here.
 */
import fc from 'fast-check'
import { encodeHistoryAfter } from '../../src/domain/history-cursor.js'
import { CLASSIFICATION_STAGE, STAGES, VERDICTS, type Sites } from '../../src/vocabulary.js'
import { BUILT } from '../dashboard/assets.js'
import {
  authorizations,
  contentTypes,
  eventNoText,
  eventNoValue,
  extraHeaders,
  hostileScalar,
  jsonBodies,
  jsonText,
  mutated,
  Obj,
  poison,
  queryStrings,
  requestHeaders,
  safeEncode,
  timeText,
  type HostileRequest,
  type Route,
  type SecurityApp
} from './hostile.js'

export interface Body {
  payload: string | Buffer
  /** The Content-Type this body is meant for (NDJSON); the generic one is used otherwise. */
  contentType?: string
}

export interface RouteInputs {
  /** Concrete paths of the route, hostile path parameters included. */
  path: fc.Arbitrary<string>
  /** Query parameters the route reads, with their values (hostile ones are added). */
  query?: Record<string, fc.Arbitrary<string>>
  body?: fc.Arbitrary<Body>
}

export interface Context extends SecurityApp {
  sites: Sites
  /** A next_cursor of GET /v1/events, as the service issued it. */
  cursor: string
  /** Credentials of a user that only POST /auth logs in (so the others' refresh tokens stay current). */
  login: { username: string; password: string }
}

const recentIso = fc
  .integer({ min: 0, max: 6 * 86_400_000 })
  .map((ago) => new Date(Date.now() - 3_600_000 - ago).toISOString())

/** The window of the tracer's window routes: mostly valid bounds (recent, or a day of May 2024), some hostile. */
const windowQuery = {
  start_time_utc: fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom('2024-05-01', '2024-05-01T00:00:00Z', new Date(Date.now() - 7 * 86_400_000).toISOString()) },
    { weight: 1, arbitrary: timeText }
  ),
  end_time_utc: fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom('2024-05-02', '2024-05-01T12:00+01:00', new Date().toISOString()) },
    { weight: 1, arbitrary: timeText }
  )
}

/**
 * A history's `after`: positions the service would give (of event 1 or 2), positions of no event
 * or made up in other spellings (padding, standard base64), and hostile text.
 */
const historyAfter = fc.oneof(
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom(1, 2, 3), fc.double({ noNaN: true }), fc.nat()).map(([eventNo, at, written]) => encodeHistoryAfter(eventNo, { at, written })) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.jsonValue(), fc.constantFrom('base64', 'base64url') as fc.Arbitrary<BufferEncoding>, fc.constantFrom('', '=', '==', ' ', '.'))
      .map(([value, encoding, tail]) => Buffer.from(JSON.stringify(value)).toString(encoding) + tail)
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 300 }) }
)

const numberText = fc.oneof(fc.double({ min: -1e3, max: 1e3, noNaN: true }).map(String), fc.integer().map(String), fc.constantFrom('1e400', '-1e400', 'NaN', 'Infinity', '-0', '0x10', '1e308', ''))

const asBody = (payload: fc.Arbitrary<string | Buffer>): fc.Arbitrary<Body> => payload.map((text) => ({ payload: text }))

/** An array body: valid records with one mutated, or hostile arrays. */
function arrayBodies(record: fc.Arbitrary<Record<string, unknown>>, max: number): fc.Arbitrary<Body> {
  const valid = fc.array(record, { minLength: 1, maxLength: 3 })
  const withOneBad = fc
    .tuple(fc.array(record, { maxLength: 2 }), mutated(record), fc.nat())
    .map(([records, bad, at]) => {
      const copy: unknown[] = [...records]
      copy.splice(at % (copy.length + 1), 0, bad)
      return copy
    })
  const hostileArrays = fc.oneof(
    fc.constant([]),
    record.map((one) => Array.from({ length: max + 1 }, (_, i) => ({ ...one, event_no: i }))),
    fc.tuple(poison, record).map(([member, one]) => new Obj([member, ...Object.entries(one)])),
    fc.array(hostileScalar, { minLength: 1, maxLength: 3 })
  )
  return asBody(jsonBodies(valid, fc.oneof({ weight: 4, arbitrary: withOneBad }, { weight: 1, arbitrary: hostileArrays })))
}

/** NDJSON bodies of POST /v1/events: records a line, poisoned lines, blank lines, CRLF, cut lines. */
function ndjsonBodies(record: fc.Arbitrary<Record<string, unknown>>): fc.Arbitrary<Body> {
  const line = fc.oneof(
    { weight: 4, arbitrary: record.map(jsonText) },
    { weight: 2, arbitrary: mutated(record).map(jsonText) },
    { weight: 1, arbitrary: fc.tuple(poison, record).map(([member, one]) => jsonText(new Obj([...Object.entries(one), member]))) },
    { weight: 1, arbitrary: fc.constantFrom('', '   ', '[]', 'null', '{', '"\\ud800"', '{"event_no":1e400}', '{"__proto__":{"polluted":true}}') }
  )
  return fc
    .tuple(fc.array(line, { minLength: 1, maxLength: 4 }), fc.constantFrom('\n', '\r\n', '\n\n'), fc.constantFrom('application/x-ndjson', 'application/x-ndjson; charset=utf-8', 'application/json'))
    .map(([lines, separator, contentType]) => ({ payload: lines.join(separator), contentType }))
}

/** Generators for each URL template the app registers. */
export function routeInputs(context: Context): Record<string, RouteInputs> {
  const { sites, writerRefresh, readerRefresh, cursor, login } = context
  const members = sites.dataProducts
  const constant = (path: string): RouteInputs => ({ path: fc.constant(path) })
  const docsStatic = fc
    .oneof(
      { weight: 3, arbitrary: fc.constantFrom('swagger-ui.css', 'index.css', 'logo.svg', 'favicon-32x32.png', 'oauth2-redirect.html', 'oauth2-redirect.js', 'csp.json', '') },
      { weight: 1, arbitrary: fc.constantFrom('nope.js', '..%2F..%2Fpackage.json', '%2e%2e/%2e%2e/package.json', '../../../../etc/passwd', '....//....//etc/passwd', '%00', 'x%00.js', '.%2e/.%2e/package.json', '%2F', 'index.css/') },
      { weight: 1, arbitrary: fc.string({ maxLength: 20 }).map(safeEncode) }
    )
    .map((file) => `/docs/static/${file}`)

  const dashboardFile = fc
    .oneof(
      { weight: 3, arbitrary: fc.constantFrom('', 'index.html', 'favicon.svg', BUILT.script, BUILT.style) },
      { weight: 1, arbitrary: fc.constantFrom('nope.js', 'src/session.js', 'src%2Fsession.js', '..%2F..%2Fpackage.json', '%2e%2e/%2e%2e/package.json', '../../../../etc/passwd', '%00', 'x%00.js', '.%2e/.%2e/index.html', '%2F', 'index.html/') },
      { weight: 1, arbitrary: fc.string({ maxLength: 20 }).map(safeEncode) }
    )
    .map((file) => `/dashboard/${file}`)

  const event = fc.record(
    {
      event_no: fc.integer({ min: 0, max: 20 }),
      timestamp_utc: recentIso,
      snr: fc.double({ min: -1e9, max: 1e9, noNaN: true }),
      known_source_name: fc.constantFrom('EXT', 'B0329+54', 'GAL'),
      dm: fc.oneof(fc.constant(null), fc.double({ min: 0, max: 3000, noNaN: true })),
      tsar_classification: fc.constantFrom('astrophysical', 'rfi'),
      actions: fc.record({ want: fc.record({ baseband: fc.boolean(), intensity: fc.boolean() }), got: fc.constant({}) })
    },
    { requiredKeys: ['event_no', 'timestamp_utc', 'snr', 'known_source_name'] }
  )
  const heartbeat = fc.record({
    event_no: fc.integer({ min: 0, max: 20 }),
    heartbeat_id: fc.maxSafeNat(),
    site: fc.constantFrom(...sites.names),
    sent: fc.record({ trigger_time: recentIso, error: fc.oneof(fc.constant(null), fc.string({ maxLength: 20 })) }),
    received: fc.record({
      total_data_files: fc.nat(),
      dir_size_gb: fc.double({ min: 0, max: 1e6, noNaN: true }),
      finished_time: fc.oneof(fc.constant(null), recentIso),
      heartbeat_sent_unix_s: fc.double({ min: 0, max: 2e9, noNaN: true })
    })
  })
  const member = fc.record({
    registered: fc.boolean(),
    should_be_at_minoc: fc.boolean(),
    larger_dataset: fc.record({ name: fc.string({ maxLength: 10 }), preferred_storage_elements: fc.array(fc.string({ maxLength: 10 }), { maxLength: 2 }) }, { requiredKeys: [] }),
    data_path: fc.string({ maxLength: 30 }),
    num_files: fc.nat(),
    missing_files: fc.array(fc.string({ maxLength: 30 }), { maxLength: 3 })
  })
  const objectBodies = (valid: fc.Arbitrary<Record<string, unknown>>) => asBody(jsonBodies(valid, mutated(valid)))
  const cursorObject = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as Record<string, unknown>
  /** A list's `limit`: 1 to 1000, and what is not. */
  const partLimit = fc.oneof(fc.integer({ min: 1, max: 1000 }).map(String), fc.constantFrom('0', '1001', '-1', '1.5', '1e3', '1e400', 'Infinity', '-1e400', 'NaN', ''))
  const cursors = fc.oneof(
    fc.constant(cursor),
    mutated(fc.constant(cursorObject)).map((obj) => Buffer.from(jsonText(obj)).toString('base64url')),
    fc.jsonValue().map((value) => Buffer.from(JSON.stringify(value)).toString('base64url')),
    fc.nat({ max: cursor.length - 1 }).map((at) => cursor.slice(0, at) + (cursor[at] === 'A' ? 'B' : 'A') + cursor.slice(at + 1)),
    fc.constantFrom('', '=', '!!!', 'e30', 'W10', 'bnVsbA', 'x'.repeat(3000))
  )

  return {
    '/docs': constant('/docs'),
    '/docs/': constant('/docs/'),
    '/docs/static/index.html': constant('/docs/static/index.html'),
    '/docs/static/swagger-initializer.js': constant('/docs/static/swagger-initializer.js'),
    '/docs/static/*': { path: docsStatic },
    '/docs/json': constant('/docs/json'),
    '/docs/yaml': constant('/docs/yaml'),
    '/': constant('/'),
    '/dashboard': constant('/dashboard'),
    '/dashboard/*': { path: dashboardFile },
    '/version': constant('/version'),
    '/health': constant('/health'),
    '/ready': constant('/ready'),
    '/metrics': constant('/metrics'),
    '/openapi.json': constant('/openapi.json'),
    '/auth': {
      path: fc.constant('/auth'),
      body: objectBodies(
        fc.oneof(
          { weight: 2, arbitrary: fc.constant(login) },
          {
            weight: 1,
            arbitrary: fc.record({
              username: fc.oneof(fc.constant(login.username), fc.constant('pipeline'), fc.string({ minLength: 1, maxLength: 20 })),
              password: fc.oneof(fc.constant(login.password), fc.string({ minLength: 1, maxLength: 20 }))
            })
          }
        )
      )
    },
    '/auth/verify': constant('/auth/verify'),
    '/auth/refresh': {
      path: fc.constant('/auth/refresh'),
      body: objectBodies(
        fc.record({
          refresh_token: fc.oneof(
            { weight: 4, arbitrary: fc.constant(writerRefresh) },
            { weight: 1, arbitrary: fc.constant(readerRefresh) },
            { weight: 1, arbitrary: fc.uuid() },
            { weight: 1, arbitrary: fc.string({ maxLength: 40 }) }
          )
        })
      )
    },
    '/v1/events': {
      path: fc.constant('/v1/events'),
      query: {
        start_time_utc: fc.oneof(recentIso, timeText),
        end_time_utc: fc.oneof(fc.constant(new Date().toISOString()), timeText),
        min_snr: numberText,
        max_snr: numberText,
        known_source_name: fc.oneof(fc.constantFrom('EXT', 'B0329+54'), fc.string({ maxLength: 300 })),
        baseband_requested: fc.constantFrom('true', 'false', '1', '0', 'yes', '', 'TRUE'),
        order: fc.constantFrom('asc', 'desc', 'ASC', '', 'random'),
        limit: partLimit,
        cursor: cursors
      },
      body: fc.oneof(arrayBodies(event, 1000), ndjsonBodies(event))
    },
    '/v1/events/:event_no': { path: eventNoText.map((no) => `/v1/events/${no}`) },
    '/v1/events/get_events': {
      path: fc.constant('/v1/events/get_events'),
      body: objectBodies(fc.record({ event_ids: fc.array(fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 0, max: 20 }) }, { weight: 1, arbitrary: eventNoValue }), { minLength: 1, maxLength: 5 }) }))
    },
    '/v1/event-tracer/baseband-callbacks': { path: fc.constant('/v1/event-tracer/baseband-callbacks'), query: windowQuery },
    '/v1/event-tracer/event-status/:event_no': { path: eventNoText.map((no) => `/v1/event-tracer/event-status/${no}`) },
    '/v1/event-tracer/audit': {
      path: fc.constant('/v1/event-tracer/audit'),
      query: {
        ...windowQuery,
        verdict: fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...VERDICTS) }, { weight: 1, arbitrary: fc.string({ maxLength: 20 }) }),
        site: fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...sites.names) }, { weight: 1, arbitrary: fc.string({ maxLength: 20 }) })
      }
    },
    '/v1/event-tracer/audit/:event_no': { path: eventNoText.map((no) => `/v1/event-tracer/audit/${no}`) },
    '/v1/event-tracer/history/:event_no': {
      // Events 1 and 2 have traces (the second with a transition); most others have no history.
      path: fc.oneof({ weight: 1, arbitrary: fc.constantFrom('1', '2') }, { weight: 2, arbitrary: eventNoText }).map((no) => `/v1/event-tracer/history/${no}`),
      query: { after: historyAfter, offset: eventNoText, limit: partLimit }
    },
    '/v1/event-tracer/heartbeats/:event_no': {
      path: fc.oneof({ weight: 1, arbitrary: fc.constantFrom('1', '2') }, { weight: 2, arbitrary: eventNoText }).map((no) => `/v1/event-tracer/heartbeats/${no}`),
      query: { after_heartbeat_id: eventNoText, limit: partLimit }
    },
    '/v1/event-tracer/stage-latency': { path: fc.constant('/v1/event-tracer/stage-latency'), query: windowQuery },
    '/v1/event-tracer/stream': {
      path: fc.constant('/v1/event-tracer/stream'),
      query: {
        event_no: eventNoText,
        site: fc.oneof(
          { weight: 3, arbitrary: fc.constantFrom(...sites.names) },
          { weight: 1, arbitrary: fc.constantFrom('', 'KKO', 'nowhere', 'kko,chime', 'tsar_classification', '__proto__', 'kko ') },
          { weight: 1, arbitrary: fc.string({ maxLength: 12 }) }
        )
      }
    },
    '/v1/event-tracer/create-trace': {
      path: fc.constant('/v1/event-tracer/create-trace'),
      body: objectBodies(fc.record({ event: fc.oneof(fc.integer({ min: 0, max: 20 }), eventNoValue), site: fc.constantFrom(...sites.names) }))
    },
    '/v1/event-tracer/update-trace': {
      path: fc.constant('/v1/event-tracer/update-trace'),
      body: objectBodies(
        fc.record({
          event: fc.integer({ min: 0, max: 20 }),
          site: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...sites.names) }, { weight: 1, arbitrary: fc.string({ maxLength: 70 }) }),
          stage: fc.constantFrom(CLASSIFICATION_STAGE, ...STAGES),
          status: fc.constantFrom('complete', 'incomplete', 'not_required')
        })
      )
    },
    '/v1/event-tracer/datatrail/:event_no/:member': {
      path: fc
        .tuple(
          fc.oneof({ weight: 1, arbitrary: fc.integer({ min: 0, max: 20 }).map(String) }, { weight: 1, arbitrary: eventNoText }),
          fc.oneof(
            { weight: 3, arbitrary: fc.constantFrom(...members) },
            { weight: 1, arbitrary: fc.constantFrom('__proto__', 'constructor', 'toString', '', 'INTENSITY', 'intensity%00') },
            { weight: 1, arbitrary: fc.string({ maxLength: 12 }).map(safeEncode) }
          )
        )
        .map(([no, name]) => `/v1/event-tracer/datatrail/${no}/${name}`),
      body: objectBodies(member)
    },
    '/v1/event-tracer/heartbeats': { path: fc.constant('/v1/event-tracer/heartbeats'), body: arrayBodies(heartbeat, 1000) }
  }
}

/** Small changes to a path that a client may make: a trailing slash, doubled slashes, case. */
const pathVariant = (path: string, variant: number) => {
  switch (variant) {
    case 1:
      return `${path}/`
    case 2:
      return path.replace(/\//g, '//')
    case 3:
      return path.toUpperCase()
    case 4:
      return `${path}%20`
    default:
      return path
  }
}

/** Hostile requests for one route; `methods` overrides the route's own method. */
export function requestsFor(route: Route, inputs: RouteInputs, context: Context, methods?: fc.Arbitrary<string>): fc.Arbitrary<HostileRequest> {
  const takesBody = inputs.body !== undefined
  const body: fc.Arbitrary<Body | undefined> = takesBody
    ? fc.oneof({ weight: 12, arbitrary: inputs.body! }, { weight: 1, arbitrary: fc.constant(undefined) })
    : fc.oneof({ weight: 8, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom<Body>({ payload: '{}' }, { payload: 'x'.repeat(1000) }, { payload: '{"a":' }) })
  return fc
    .record({
      method: methods ?? fc.constant(route.method),
      path: inputs.path,
      variant: fc.oneof({ weight: 12, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 4 }) }),
      query: queryStrings(inputs.query ?? {}),
      authorization: authorizations(context),
      contentType: contentTypes,
      ownContentType: fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
      extra: fc.oneof({ weight: 2, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: extraHeaders }),
      body,
      lengthLie: fc.oneof({ weight: 12, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: -5, max: 5 }) })
    })
    .map(({ method, path, variant, query, authorization, contentType, ownContentType, extra, body, lengthLie }) => {
      const type = body?.contentType !== undefined && ownContentType ? body.contentType : body === undefined ? undefined : contentType
      const headers = requestHeaders(authorization, type, extra)
      if (body !== undefined && lengthLie !== 0) {
        headers['content-length'] = String(Math.max(0, Buffer.byteLength(body.payload) + lengthLie))
      }
      return readable({
        method,
        url: pathVariant(path, variant) + query,
        headers,
        ...(body === undefined ? {} : { payload: body.payload })
      })
    })
}

const cut = (text: string, max = 300) => (text.length <= max ? text : `${text.slice(0, max)}... (${text.length} characters)`)

/** Counterexamples print short: fast-check shows this instead of a 1 MB payload. */
export function readable<T extends HostileRequest>(request: T): T {
  Object.defineProperty(request, fc.toStringMethod, {
    enumerable: false,
    value: () =>
      JSON.stringify({
        method: request.method,
        url: cut(request.url),
        headers: Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, cut(value, 120)])),
        payload: request.payload === undefined ? undefined : Buffer.isBuffer(request.payload) ? `<${request.payload.length} bytes> ${cut(request.payload.toString('latin1'))}` : cut(request.payload)
      })
  })
  return request
}

// ---------------------------------------------------------------------------------------------
// An oracle of inputs that must never get a 2xx: it gives the properties teeth beyond "no 5xx".

const isEventNo = (value: unknown) => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
const EVENT_NO_TEXT = /^(0|[1-9][0-9]*)$/

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text) }
  } catch {
    return { ok: false }
  }
}

/** A `__proto__` member anywhere, or `constructor` holding a `prototype`: what the parsers refuse. Iterative: bodies nest 100,000 deep. */
function poisoned(root: unknown): boolean {
  const stack: unknown[] = [root]
  while (stack.length > 0) {
    const value = stack.pop()
    if (value === null || typeof value !== 'object') continue
    if (Array.isArray(value)) {
      stack.push(...value)
      continue
    }
    const record = value as Record<string, unknown>
    if (Object.prototype.hasOwnProperty.call(record, '__proto__')) return true
    const ctor = Object.getOwnPropertyDescriptor(record, 'constructor')?.value as unknown
    if (ctor !== null && typeof ctor === 'object' && Object.prototype.hasOwnProperty.call(ctor, 'prototype')) return true
    stack.push(...Object.values(record))
  }
  return false
}

/**
 * Why `request` must be refused (never a 2xx), or undefined when it may be accepted. Only
 * necessary conditions of the contract: an invalid event_no in the path or the body, poisoned
 * or unparsable JSON, a limit outside 1..1000, an unknown order, verdict, site, stage, status or member.
 */
export function mustRefuse(route: Route, request: HostileRequest, sites: Sites): string | undefined {
  if (request.method !== route.method) return undefined
  const [path = '', query = ''] = request.url.split(/\?(.*)/s)
  const template = route.url.split('/')
  const segments = path.split('/')
  if (segments.length !== template.length) return undefined
  for (const [i, part] of template.entries()) {
    if (!part.startsWith(':')) continue
    let value: string
    try {
      value = decodeURIComponent(segments[i]!)
    } catch {
      return `path.${part.slice(1)} is not valid percent-encoding`
    }
    if (part === ':event_no' && !(EVENT_NO_TEXT.test(value) && Number(value) <= Number.MAX_SAFE_INTEGER)) return `path.event_no ${JSON.stringify(value)}`
    if (part === ':member' && !sites.dataProducts.includes(value)) return `path.member ${JSON.stringify(value)}`
  }

  if (route.url === '/v1/events' && route.method !== 'POST') {
    const params = new URLSearchParams(query)
    for (const name of ['limit', 'order', 'baseband_requested']) {
      const values = params.getAll(name)
      if (values.length > 1) return `query.${name} given ${values.length} times`
    }
    const limit = params.get('limit')
    if (limit !== null && !(Number.isInteger(Number(limit)) && Number(limit) >= 1 && Number(limit) <= 1000 && limit !== '')) return `query.limit ${JSON.stringify(limit)}`
    const order = params.get('order')
    if (order !== null && order !== 'asc' && order !== 'desc') return `query.order ${JSON.stringify(order)}`
    const flag = params.get('baseband_requested')
    if (flag !== null && flag !== 'true' && flag !== 'false') return `query.baseband_requested ${JSON.stringify(flag)}`
  }

  if (route.url === '/v1/event-tracer/heartbeats/:event_no' || route.url === '/v1/event-tracer/history/:event_no') {
    const params = new URLSearchParams(query)
    const limit = params.get('limit')
    if (limit !== null && params.getAll('limit').length === 1 && !(Number.isInteger(Number(limit)) && Number(limit) >= 1 && Number(limit) <= 1000 && limit !== '')) return `query.limit ${JSON.stringify(limit)}`
  }
  if (route.url === '/v1/event-tracer/history/:event_no') {
    const params = new URLSearchParams(query)
    const offset = params.getAll('offset')
    // Paging by offset is gone: only 0, the first part, is read.
    if (offset.length === 1 && offset[0] !== '' && Number(offset[0]) !== 0) return `query.offset ${JSON.stringify(offset[0])}`
    const after = params.getAll('after')
    const eventNo = Number(path.split('/').at(-1))
    if (after.length === 1 && !givenFor(after[0]!, eventNo)) return `query.after ${JSON.stringify(after[0])}`
  }

  if (route.url === '/v1/event-tracer/audit') {
    const params = new URLSearchParams(query)
    const allowed = { verdict: VERDICTS as readonly string[], site: sites.names }
    for (const [name, values] of Object.entries(allowed)) {
      const given = params.getAll(name)
      if (given.length > 1) return `query.${name} given ${given.length} times`
      if (given.length === 1 && !values.includes(given[0]!)) return `query.${name} ${JSON.stringify(given[0])}`
    }
  }
  if (route.url === '/v1/event-tracer/stream') {
    const params = new URLSearchParams(query)
    for (const name of ['event_no', 'site']) {
      const values = params.getAll(name)
      if (values.length > 1) return `query.${name} given ${values.length} times`
    }
    const eventNo = params.get('event_no')
    if (eventNo !== null && !(EVENT_NO_TEXT.test(eventNo) && Number(eventNo) <= Number.MAX_SAFE_INTEGER)) return `query.event_no ${JSON.stringify(eventNo)}`
    const site = params.get('site')
    if (site !== null && !sites.includes(site)) return `query.site ${JSON.stringify(site)}`
  }

  if (!['POST', 'PUT', 'PATCH'].includes(route.method)) return undefined
  if (request.payload === undefined) return 'no body'
  const text = Buffer.isBuffer(request.payload) ? request.payload.toString('utf8') : request.payload
  const lengthLies = request.headers['content-length'] !== undefined && Number(request.headers['content-length']) !== Buffer.byteLength(request.payload)
  if (lengthLies) return 'Content-Length does not match the body'
  const ndjson = /^application\/x-ndjson/i.test(request.headers['content-type'] ?? '')
  let body: unknown
  if (ndjson && route.url === '/v1/events') {
    const records: unknown[] = []
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue
      const parsed = parseJson(line)
      if (!parsed.ok) return 'an NDJSON line is not JSON'
      records.push(parsed.value)
    }
    body = records
  } else {
    const parsed = parseJson(text)
    if (!parsed.ok) return 'the body is not JSON'
    body = parsed.value
  }
  if (poisoned(body)) return 'a __proto__ or constructor.prototype member'
  const record = (body ?? {}) as Record<string, unknown>
  switch (route.url) {
    case '/v1/event-tracer/create-trace':
      if (!isEventNo(record.event)) return `body.event ${JSON.stringify(record.event)}`
      if (!sites.includes(record.site as string)) return `body.site ${JSON.stringify(record.site)}`
      break
    case '/v1/event-tracer/update-trace':
      if (!isEventNo(record.event)) return `body.event ${JSON.stringify(record.event)}`
      if (!['complete', 'incomplete', 'not_required'].includes(record.status as string)) return `body.status ${JSON.stringify(record.status)}`
      if (record.stage !== CLASSIFICATION_STAGE && !sites.includes(record.site as string)) return `body.site ${JSON.stringify(record.site)}`
      break
    case '/v1/events':
    case '/v1/event-tracer/heartbeats': {
      if (!Array.isArray(body) || body.length === 0 || body.length > 1000) return 'not an array of 1 to 1000 records'
      const bad = body.findIndex((item) => item === null || typeof item !== 'object' || !isEventNo((item as Record<string, unknown>).event_no))
      if (bad !== -1) return `body[${bad}].event_no`
      break
    }
    case '/v1/events/get_events': {
      const ids = record.event_ids
      if (!Array.isArray(ids) || ids.length === 0 || ids.length > 1000) return 'event_ids is not an array of 1 to 1000 numbers'
      const bad = ids.findIndex((id) => !isEventNo(id))
      if (bad !== -1) return `body.event_ids[${bad}] ${JSON.stringify(ids[bad])}`
      break
    }
    case '/v1/event-tracer/datatrail/:event_no/:member':
      if (!isEventNo(record.num_files)) return `body.num_files ${JSON.stringify(record.num_files)}`
      break
  }
  return undefined
}

/** Whether `after` is a position the service gives in event `eventNo`'s history: its own spelling of one. */
function givenFor(after: string, eventNo: number): boolean {
  let position: unknown
  try {
    position = JSON.parse(Buffer.from(after, 'base64url').toString('utf8'))
  } catch {
    return false
  }
  const { at, written } = (position ?? {}) as { at?: unknown; written?: unknown }
  return typeof at === 'number' && Number.isSafeInteger(written) && (written as number) >= 0 && encodeHistoryAfter(eventNo, { at, written: written as number }) === after
}
