/**
 * Property-based tests over every route: random and hostile paths, query strings, bodies and
 * headers, anonymous and with writer and reader tokens. Every answer is a 2xx or the error
 * envelope of CONTRACT section 1 with a matching exception; never a 5xx; the process keeps serving
 * and no prototype gets polluted. FC_SEED=<n> replays another seed; fast-check prints the seed and
 * the shrunk counterexample of a failure.
 */
import { METHODS } from 'node:http'
import fc from 'fast-check'
import t from 'tap'
import type { Test } from 'tap'
import { addUser, build } from '../helper.js'
import {
  assertAnswer,
  contractViolation,
  prototypeKeys,
  RUNS,
  SEED,
  securityApp,
  send,
  type HostileRequest,
  type Route
} from './hostile.js'
import { mustRefuse, readable, requestsFor, routeInputs, type Context } from './route-inputs.js'

// Shrinking is on, bounded: a failing property reports its smallest counterexample found in 20 s.
// Given to each property rather than set globally, which would reach the other suites of this process.
const TIME_LIMIT = { interruptAfterTimeLimit: 20_000 }

const RUNS_WITH_BODY = 100

/** The app with users, events, a trace, datatrail and heartbeats, so that valid inputs get a 2xx. */
async function context(t: Test): Promise<Context> {
  const secured = await securityApp(t)
  const { app, writer } = secured
  const login = { username: 'login-user', password: 'login-user-password' }
  await addUser(app, login.username, login.password, 'reader')
  const day = (ago: number) => new Date(Date.now() - ago * 86_400_000).toISOString()
  const events = [1, 2, 3, 4, 5].map((event_no) => ({
    event_no,
    timestamp_utc: event_no < 3 ? `2024-05-01T1${event_no}:00:00Z` : day(event_no - 2),
    snr: 10 + event_no,
    known_source_name: 'EXT',
    actions: { want: { baseband: true }, got: {} }
  }))
  const seed: [string, string, unknown][] = [
    ['POST', '/v1/events', events],
    ['POST', '/v1/event-tracer/create-trace', { event: 1, site: 'chime' }],
    ['POST', '/v1/event-tracer/update-trace', { event: 2, site: 'kko', stage: 'baseband_conversion', status: 'complete' }],
    ['PUT', '/v1/event-tracer/datatrail/1/intensity', { registered: true, should_be_at_minoc: false, larger_dataset: {}, data_path: '/d', num_files: 1, missing_files: [] }],
    ['POST', '/v1/event-tracer/heartbeats', [{ event_no: 1, heartbeat_id: 1, site: 'kko', sent: { trigger_time: '2024-05-01T10:00:05Z', error: null }, received: { total_data_files: 1, dir_size_gb: 1, finished_time: null, heartbeat_sent_unix_s: 1714557605 } }]]
  ]
  for (const [method, url, payload] of seed) {
    const response = await app.inject({ method: method as 'POST', url, headers: { authorization: writer }, payload: payload as object })
    if (response.statusCode !== 200) throw new Error(`seeding ${url}: ${response.statusCode} ${response.body}`)
  }
  const page = await app.inject({ url: `/v1/events?limit=1&start_time_utc=${day(30)}`, headers: { authorization: writer } })
  const cursor = page.json<{ next_cursor: string | null }>().next_cursor
  if (cursor === null) throw new Error('expected a next_cursor')
  return { ...secured, sites: app.config.TRACER_SITES, cursor, login }
}

let batches = 0

/** Runs one batch, then checks that the process still serves and Object.prototype is untouched. */
async function batch(
  t: Test,
  ctx: Context,
  name: string,
  requests: fc.Arbitrary<HostileRequest>,
  numRuns: number,
  refusal: (request: HostileRequest) => string | undefined = () => undefined
) {
  // A seed of its own per batch, so that routes with the same generators see different inputs.
  const seed = SEED + batches++
  const before = prototypeKeys()
  const statuses = new Map<number, number>()
  let refusedAsRequired = 0
  await fc.assert(
    fc.asyncProperty(requests, async (request) => {
      const answer = await send(ctx.app, request)
      statuses.set(answer.statusCode, (statuses.get(answer.statusCode) ?? 0) + 1)
      assertAnswer(request, answer)
      const why = refusal(request)
      if (why !== undefined && answer.statusCode < 300) throw new Error(`${request.method} ${request.url.slice(0, 200)} answered ${answer.statusCode} though ${why}`)
      if (why !== undefined) refusedAsRequired++
    }),
    { numRuns: RUNS(numRuns), seed, ...TIME_LIMIT }
  )
  t.comment(`${name}: ${RUNS(numRuns)} runs (seed ${seed}), statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}, ${refusedAsRequired} refused as the oracle requires`)
  t.equal(prototypeKeys(), before, `${name}: Object.prototype gained no keys`)
  t.equal(({} as Record<string, unknown>).polluted, undefined, `${name}: no polluted property`)
  const health = await ctx.app.inject({ url: '/health' })
  t.equal(health.statusCode, 200, `${name}: /health answers 200 after the batch`)
  t.strictSame(health.json(), { status: 'ok' })
  return statuses
}

t.test('the answer check itself', async (t) => {
  const request = { method: 'GET', url: '/v1/events', headers: {} }
  const json = { 'content-type': 'application/json; charset=utf-8' }
  const envelope = (exception: string, reasons = ['x']) => JSON.stringify({ reasons, exception })
  t.equal(contractViolation(request, { statusCode: 200, headers: json, body: '{}' }), undefined)
  t.equal(contractViolation(request, { statusCode: 404, headers: json, body: envelope('NotFound') }), undefined)
  t.match(contractViolation(request, { statusCode: 500, headers: json, body: envelope('InternalError') }), /500/)
  t.match(contractViolation(request, { statusCode: 404, headers: json, body: envelope('BadRequest') }), /NotFound/)
  t.match(contractViolation(request, { statusCode: 400, headers: json, body: JSON.stringify({ statusCode: 400, error: 'Bad Request', message: 'x' }) }), /keys/)
  t.match(contractViolation(request, { statusCode: 400, headers: json, body: envelope('BadRequest', []) }), /reasons/)
  t.match(contractViolation(request, { statusCode: 418, headers: json, body: envelope('Teapot') }), /418/)
  t.match(contractViolation(request, { statusCode: 400, headers: { 'content-type': 'text/html' }, body: '<h1>x</h1>' }), /content-type/)
  t.match(contractViolation(request, { statusCode: 302, headers: json, body: '' }), /302/)
  t.match(contractViolation(request, { statusCode: 401, headers: json, body: envelope('Unauthorized', ['no']) }), /Unauthorized/)
  t.match(contractViolation(request, { statusCode: 400, headers: json, body: envelope('Unauthorized', ['Authorization header not present.']) }), /Unauthorized/)
  const verify = { method: 'GET', url: '/auth/verify?x=1', headers: {} }
  t.equal(contractViolation(verify, { statusCode: 400, headers: json, body: envelope('Unauthorized', ['Authorization header not present.']) }), undefined)
  t.equal(contractViolation(verify, { statusCode: 401, headers: json, body: JSON.stringify({ valid: false, reasons: ['x'], exception: 'InvalidToken' }) }), undefined)
  t.match(contractViolation(verify, { statusCode: 401, headers: json, body: envelope('InvalidToken') }), /valid/)
  t.match(contractViolation(request, { statusCode: 400, headers: json, body: envelope('BadRequest', ['at x (/srv/node_modules/y.js:1:2)']) }), /leaked/)
})

// One app for the whole file (built once: each build costs logins and seeding); closed at the end.
const ctx = await context(t)

t.test('every route of the app has a generator, and the OpenAPI document lists no other', async (t) => {
  const inputs = routeInputs(ctx)
  const templates = [...new Set(ctx.routes.map((route) => route.url))]
  t.ok(templates.length >= 20, `${templates.length} URL templates`)
  for (const url of templates) t.ok(inputs[url], `a generator for ${url}`)
  for (const url of Object.keys(inputs)) t.ok(templates.includes(url), `the generator of ${url} names a route that exists`)

  const document = (await ctx.app.inject({ url: '/openapi.json' })).json<{ paths: Record<string, Record<string, unknown>> }>()
  const registered = new Set(ctx.routes.map((route) => `${route.method} ${route.url}`))
  const documented = new Set<string>()
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const method of Object.keys(operations)) {
      const key = `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`
      documented.add(key)
      t.ok(registered.has(key), `${key} of the OpenAPI document is a route`)
    }
  }
  // Pages are not API: the docs, and the dashboard with / leading to it, stay out of the document.
  const pages = (key: string) => key.includes(' /docs') || key.includes(' /dashboard') || key === 'GET /'
  const undocumented = [...registered].filter((key) => !documented.has(key) && !key.startsWith('HEAD ') && !pages(key))
  t.strictSame(undocumented, [], 'every route but HEAD and the pages is documented')
})

t.test('hostile requests on every route, anonymous and with writer and reader tokens', async (t) => {
  const inputs = routeInputs(ctx)
  const started = Date.now()
  for (const route of ctx.routes) {
    const input = inputs[route.url]
    if (input === undefined) {
      t.fail(`no generator for ${route.method} ${route.url}: add one to test/security/route-inputs.ts`)
      continue
    }
    const runs = input.body !== undefined && route.method !== 'GET' && route.method !== 'HEAD' ? RUNS_WITH_BODY : route.url.startsWith('/v1') ? 80 : 30
    await t.test(`${route.method} ${route.url}`, async (t) => {
      const statuses = await batch(t, ctx, `${route.method} ${route.url}`, requestsFor(route, input, ctx), runs, (request) => mustRefuse(route, request, ctx.sites))
      // Valid inputs occur: a property that only ever saw errors would prove little.
      if (input.body !== undefined || route.url.startsWith('/v1') || route.url.startsWith('/auth')) {
        t.ok([...statuses.keys()].some((status) => status >= 400), 'some inputs were refused')
      }
      t.ok([...statuses.keys()].some((status) => status < 400), 'some inputs were accepted')
    })
  }
  t.comment(`all routes: ${Date.now() - started} ms`)
})

t.test('random methods on every route', async (t) => {
  const inputs = routeInputs(ctx)
  // light-my-request accepts the methods node:http knows; others are refused by the HTTP parser
  // (see hostile-socket.ts).
  const methods = fc.constantFrom(...METHODS)
  const requests = fc.constantFrom(...ctx.routes).chain((route) => requestsFor(route, inputs[route.url]!, ctx, methods).map((request) => readable({ ...request, route })))
  await batch(t, ctx, 'random methods', requests, 300, (request) => mustRefuse((request as HostileRequest & { route: Route }).route, request, ctx.sites))
})

t.test('random paths that are no route', async (t) => {
  const segment = fc.oneof(
    fc.constantFrom('v1', 'v2', 'events', 'event-tracer', 'auth', 'docs', 'static', '..', '.', '%2e%2e', '%2F', '%00', '%ZZ', '%ED%A0%80', '__proto__', 'constructor', ''),
    fc.string({ maxLength: 12 }).map((text) => encodeURIComponent(text.replace(/[\ud800-\udfff]/g, ''))),
    fc.constantFrom(200, 2000).map((length) => 'p'.repeat(length))
  )
  const requests = fc
    .record({ segments: fc.array(segment, { minLength: 1, maxLength: 6 }), method: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS') })
    .map(({ segments, method }): HostileRequest => readable({ method, url: `/${segments.join('/')}`, headers: { authorization: ctx.reader } }))
  await batch(t, ctx, 'random paths', requests, 200)
})

t.test('deep nesting in every JSON body: 10,000 levels (100,000 for arrays and __proto__), with and without __proto__ at the bottom', async (t) => {
  const bodyRoutes = ctx.routes.filter((route) => ['POST', 'PUT', 'PATCH'].includes(route.method))
  t.ok(bodyRoutes.length >= 7, `${bodyRoutes.length} routes take a body`)
  const before = prototypeKeys()
  for (const route of bodyRoutes) {
    const url = route.url.replace(':event_no', '1').replace(':member', 'intensity')
    for (const depth of [10_000, 100_000]) {
      const shapes = {
        arrays: '['.repeat(depth) + ']'.repeat(depth),
        objects: '{"a":'.repeat(depth) + '1' + '}'.repeat(depth),
        'objects ending in __proto__': '{"a":'.repeat(depth) + '{"__proto__":{"polluted":true}}' + '}'.repeat(depth),
        'objects ending in constructor.prototype': '{"a":'.repeat(depth) + '{"constructor":{"prototype":{"polluted":true}}}' + '}'.repeat(depth),
        'inside a valid-looking member': `{"event":1,"site":"chime","username":"a","password":"b","refresh_token":"x","nested":${'['.repeat(depth)}${']'.repeat(depth)}}`
      }
      for (const [shape, payload] of Object.entries(shapes)) {
        if (depth > 10_000 && !['arrays', 'objects ending in __proto__'].includes(shape)) continue
        for (const contentType of route.url === '/v1/events' ? ['application/json', 'application/x-ndjson'] : ['application/json']) {
          const request = { method: route.method, url, headers: { authorization: ctx.writer, 'content-type': contentType }, payload }
          const started = Date.now()
          const answer = await send(ctx.app, request)
          const label = `${route.method} ${url} ${contentType} ${shape} x${depth}`
          t.equal(contractViolation(request, answer), undefined, `${label}: ${answer.statusCode}`)
          t.ok(Date.now() - started < 5000, `${label}: answered in ${Date.now() - started} ms`)
          if (shape.includes('__proto__') || shape.includes('constructor')) {
            t.equal(answer.statusCode, 400, `${label}: refused as poisoned JSON`)
          }
        }
      }
    }
  }
  t.equal(prototypeKeys(), before, 'Object.prototype gained no keys')
  t.equal((await ctx.app.inject({ url: '/health' })).statusCode, 200, 'still serving')
})

t.test('__proto__ and constructor keys are refused in JSON and in every NDJSON line', async (t) => {
  // An event_no no generator of this file produces, so the check below sees only this test's writes.
  const event = { event_no: 4_242_424_242, timestamp_utc: '2024-05-01T10:00:00Z', snr: 10, known_source_name: 'EXT' }
  const line = JSON.stringify(event)
  const poisoned = [
    `{"__proto__":{"polluted":true},${line.slice(1)}`,
    `{${line.slice(1, -1)},"actions":{"want":{"__proto__":{"baseband":true}},"got":{}}}`,
    `{${line.slice(1, -1)},"constructor":{"prototype":{"polluted":true}}}`,
    `{${line.slice(1, -1)},"x":[{"y":{"__proto__":null}}]}`
  ]
  for (const [i, bad] of poisoned.entries()) {
    const json = await ctx.app.inject({ method: 'POST', url: '/v1/events', headers: { authorization: ctx.writer, 'content-type': 'application/json' }, payload: `[${line},${bad}]` })
    t.equal(json.statusCode, 400, `JSON array, poisoned record ${i}`)
    t.equal(json.json().exception, 'BadRequest')
    const ndjson = await ctx.app.inject({ method: 'POST', url: '/v1/events', headers: { authorization: ctx.writer, 'content-type': 'application/x-ndjson' }, payload: `${line}\n${bad}\n` })
    t.equal(ndjson.statusCode, 400, `NDJSON, poisoned line ${i}`)
    t.strictSame(ndjson.json(), json.json(), `NDJSON, poisoned line ${i}: refused for the same reason as in a JSON array`)
    const reason = json.json<{ reasons: string[] }>().reasons.join(' / ')
    t.match(reason, bad.includes('__proto__') ? /^body\[1\][.a-z0-9[\]]* has a member named "__proto__"/ : /^body\[1\]\.constructor is not allowed$/, reason)
  }
  t.equal((await ctx.app.inject({ url: '/v1/events/4242424242', headers: { authorization: ctx.reader } })).statusCode, 404, 'nothing of the refused batches was stored')
  t.equal(({} as Record<string, unknown>).polluted, undefined)
})

t.test('event_no out of range or of the wrong type is 400 in the path, the query (cursor) and the body; a path segment that is no number is no route', async (t) => {
  const bad = ['-1', '-0', '1.5', '1e3', '1e400', '9007199254740992', '99999999999999999999', '0x10', '01', '+1']
  // A segment not written as a number does not fill an event number: the path is no route's (404).
  const words = ['NaN', 'Infinity', '%20', '１', 'abc']
  for (const text of [...bad, ...words]) {
    const status = bad.includes(text) ? 400 : 404
    for (const url of [`/v1/events/${encodeURI(text)}`, `/v1/event-tracer/event-status/${encodeURI(text)}`]) {
      const response = await ctx.app.inject({ url, headers: { authorization: ctx.reader } })
      t.equal(response.statusCode, status, `GET ${url}`)
      t.equal(response.json().exception, status === 400 ? 'BadRequest' : 'NotFound')
    }
    const put = await ctx.app.inject({
      method: 'PUT',
      url: `/v1/event-tracer/datatrail/${encodeURI(text)}/intensity`,
      headers: { authorization: ctx.writer },
      payload: { registered: true, should_be_at_minoc: false, larger_dataset: {}, data_path: '', num_files: 0, missing_files: [] }
    })
    t.equal(put.statusCode, status, `PUT datatrail/${text}`)
  }
  const badJson = ['-1', '-0.5', '1.5', '9007199254740992', '1e300', '1e400', '-1e400', 'NaN', 'Infinity', '"1"', 'true', 'null', '[1]', '{}']
  for (const text of badJson) {
    const bodies: [string, string][] = [
      ['/v1/event-tracer/create-trace', `{"event":${text},"site":"chime"}`],
      ['/v1/event-tracer/update-trace', `{"event":${text},"site":"kko","stage":"baseband_conversion","status":"complete"}`],
      ['/v1/events', `[{"event_no":${text},"timestamp_utc":"2024-05-01T10:00:00Z","snr":1,"known_source_name":"EXT"}]`],
      ['/v1/event-tracer/heartbeats', `[{"event_no":${text},"heartbeat_id":9,"site":"kko","sent":{"trigger_time":"2024-05-01T10:00:05Z","error":null},"received":{"total_data_files":1,"dir_size_gb":1,"finished_time":null,"heartbeat_sent_unix_s":1}}]`]
    ]
    for (const [url, payload] of bodies) {
      const response = await ctx.app.inject({ method: 'POST', url, headers: { authorization: ctx.writer, 'content-type': 'application/json' }, payload })
      t.equal(response.statusCode, 400, `POST ${url} event_no ${text}`)
      t.equal(response.json().exception, 'BadRequest')
    }
  }
  // A cursor carrying an out-of-range position.
  const cursor = (value: unknown) =>
    Buffer.from(JSON.stringify({ window: { start: 0, end: 1000 }, order: 'desc', after: { timestamp: 500, event_no: value } })).toString('base64url')
  for (const value of [-2, 1.5, 2 ** 53, 1e300, '1', null]) {
    const response = await ctx.app.inject({ url: `/v1/events?cursor=${cursor(value)}`, headers: { authorization: ctx.reader } })
    t.equal(response.statusCode, 400, `cursor with event_no ${String(value)}`)
  }
})

t.test('bugs these suites found, fixed', async (t) => {
  const envelope = (exception: string) => ({ reasons: [String], exception })

  t.test('GET /v1/events?limit=1e400 is 400 BadRequest (CONTRACT 5: limit 1..1000)', async (t) => {
    for (const limit of ['1e400', '-1e400', 'Infinity', '1e309']) {
      const response = await ctx.app.inject({ url: `/v1/events?limit=${limit}`, headers: { authorization: ctx.reader } })
      t.equal(response.statusCode, 400, `limit=${limit}`)
      t.match(response.json(), envelope('BadRequest'), `limit=${limit}`)
    }
    const finite = await ctx.app.inject({ url: '/v1/events?limit=1e308', headers: { authorization: ctx.reader } })
    t.equal(finite.statusCode, 400, 'a finite limit over 1000 is refused as it should be')
  })

  t.test('a static docs file with an unsatisfiable Range or a failed precondition is 416/412 in the envelope, not 500', async (t) => {
    const cases: [Record<string, string>, number][] = [
      [{ range: 'bytes=999999-' }, 416],
      [{ 'if-match': '"x"' }, 412],
      [{ 'if-unmodified-since': 'Wed, 21 Oct 1990 07:28:00 GMT' }, 412]
    ]
    for (const [headers, status] of cases) {
      const response = await ctx.app.inject({ url: '/docs/static/swagger-ui.css', headers })
      t.equal(response.statusCode, status, JSON.stringify(headers))
      t.match(response.json(), envelope('BadRequest'), JSON.stringify(headers))
    }
  })

  t.test('a missing static docs file is 404 NotFound', async (t) => {
    for (const method of ['GET', 'HEAD'] as const) {
      const response = await ctx.app.inject({ method, url: '/docs/static/nope.js' })
      t.equal(response.statusCode, 404, method)
    }
  })

  t.test('an event_no path parameter over 100 characters is 400 BadRequest (CONTRACT 5: anything else is 400)', async (t) => {
    for (const url of [`/v1/events/${'9'.repeat(101)}`, `/v1/event-tracer/event-status/${'9'.repeat(101)}`]) {
      const response = await ctx.app.inject({ url, headers: { authorization: ctx.reader } })
      t.equal(response.statusCode, 400, url.slice(0, 40))
      t.match(response.json(), envelope('BadRequest'), url.slice(0, 40))
    }
  })
})

t.test('POST /auth answers 429 TooManyRequests in the envelope once the limit is hit, whatever the body', async (t) => {
  const app = await build(t, { AUTH_RATE_LIMIT: '3' })
  const bodies = ['{"username":"a","password":"b"}', '{"__proto__":{}}', '[', 'x'.repeat(100)]
  let limited = 0
  for (let i = 0; i < 8; i++) {
    const request = { method: 'POST', url: '/auth', headers: { 'content-type': 'application/json' }, payload: bodies[i % bodies.length]! }
    const answer = await send(app, request)
    t.equal(contractViolation(request, answer), undefined, `attempt ${i}: ${answer.statusCode}`)
    if (answer.statusCode === 429) limited++
  }
  t.equal(limited, 5, 'attempts 4 to 8 are throttled')
})
