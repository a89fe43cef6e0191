import { readFileSync } from 'node:fs'
import t from 'tap'
import { build, userWithTokens } from '../helper.js'

t.test('GET /version answers the package version without a token', async (t) => {
  const app = await build(t)
  const response = await app.inject({ url: '/version' })
  t.equal(response.statusCode, 200)
  const { version } = JSON.parse(readFileSync('package.json', 'utf8'))
  t.strictSame(response.json(), { version })
})

t.test('GET /health and GET /ready', async (t) => {
  const app = await build(t)
  t.strictSame((await app.inject({ url: '/health' })).json(), { status: 'ok' })
  const ready = await app.inject({ url: '/ready' })
  t.equal(ready.statusCode, 200)
  t.strictSame(ready.json(), { status: 'ok' })
})

t.test('GET /ready is 503 ServiceUnavailable when the store cannot be used', async (t) => {
  const app = await build(t)
  await app.store.close()
  const ready = await app.inject({ url: '/ready' })
  t.equal(ready.statusCode, 503)
  t.strictSame(ready.json(), {
    reasons: ['The store is unavailable; try again shortly.'],
    exception: 'ServiceUnavailable'
  })
})

t.test('GET /openapi.json is the OpenAPI document', async (t) => {
  const app = await build(t)
  const response = await app.inject({ url: '/openapi.json' })
  t.equal(response.statusCode, 200)
  const document = response.json()
  t.equal(document.openapi, '3.1.0')
  t.ok(document.paths['/auth/verify'].get, 'describes the routes')
  t.ok(document.components.schemas.ErrorEnvelope, 'names its components')
})

t.test('GET /docs serves the interactive documentation', async (t) => {
  const app = await build(t)
  const response = await app.inject({ url: '/docs/' })
  t.equal(response.statusCode, 200)
  t.match(response.headers['content-type'], /text\/html/)
  t.match(response.body, /swagger/i)
  const redirect = await app.inject({ url: '/docs' })
  t.ok([200, 302].includes(redirect.statusCode), `/docs answers ${redirect.statusCode}`)
})

t.test('/docs lists no HEAD twin of each GET, while the document keeps them', async (t) => {
  const app = await build(t)
  type Paths = Record<string, Record<string, unknown>>
  const shown = (await app.inject({ url: '/docs/json' })).json<{ paths: Paths }>().paths
  const documented = (app.swagger() as { paths: Paths }).paths
  t.ok(Object.values(documented).some((operations) => 'head' in operations), 'openapi.yaml documents HEAD')
  t.strictSame(Object.entries(shown).filter(([, operations]) => 'head' in operations), [], 'the page lists none')
  const methods = (paths: Paths, skip: string) => Object.entries(paths).flatMap(([path, operations]) => Object.keys(operations).filter((method) => method !== skip).map((method) => `${method} ${path}`))
  t.strictSame(methods(shown, 'head'), methods(documented, 'head'), 'and every other operation')
})

t.test('/docs asks browsers to upgrade plain-HTTP loads only behind TLS (BEHIND_TLS)', async (t) => {
  const csp = async (env: Record<string, string>) => {
    const app = await build(t, env)
    return String((await app.inject({ url: '/docs/' })).headers['content-security-policy'])
  }
  const plain = await csp({})
  t.match(plain, /script-src 'self'/, 'the page has its own policy')
  t.notMatch(plain, /upgrade-insecure-requests/, 'over plain HTTP the assets load from where the page is')
  t.match(await csp({ BEHIND_TLS: 'true' }), /script-src 'self'.*; upgrade-insecure-requests;?$/)
})

t.test('GET /metrics: requests by route and status, latency, store latency, process metrics', async (t) => {
  const app = await build(t)
  await app.inject({ url: '/ready' })
  await app.inject({ url: '/ready' })
  await app.inject({ url: '/v1/events/7' })
  await app.inject({ url: '/no/such/route' })
  const response = await app.inject({ url: '/metrics' })
  t.equal(response.statusCode, 200)
  t.match(response.headers['content-type'], /^text\/plain/)
  const text = response.body
  t.match(text, /^http_request_duration_seconds_count\{method="GET",route="\/ready",status_code="200"\} 2$/m)
  t.match(text, /^http_request_duration_seconds_count\{method="GET",route="\/v1\/events\/:event_no",status_code="401"\} 1$/m)
  t.match(text, /^http_request_duration_seconds_count\{method="GET",route="\(unmatched\)",status_code="404"\} 1$/m)
  t.match(text, /^http_request_duration_seconds_bucket\{le="0\.005",method="GET",route="\/ready",status_code="200"\} \d+$/m)
  t.match(text, /^store_operation_duration_seconds_count\{operation="ping",outcome="ok"\} 2$/m)
  t.match(text, /^process_resident_memory_bytes \d+/m)
  t.match(text, /^nodejs_eventloop_lag_seconds /m)
})

t.test('METRICS_REQUIRE_TOKEN=true: GET /metrics needs an access token of any role', async (t) => {
  const app = await build(t, { METRICS_REQUIRE_TOKEN: 'true' })
  const anonymous = await app.inject({ url: '/metrics' })
  t.equal(anonymous.statusCode, 401)
  t.strictSame(anonymous.json(), { reasons: ['Authorization header not present.'], exception: 'Unauthorized' })
  const forged = await app.inject({ url: '/metrics', headers: { authorization: 'garbage' } })
  t.equal(forged.statusCode, 401)
  t.equal(forged.json().exception, 'InvalidToken')
  const { access_token } = await userWithTokens(app, 'prometheus', 'reader')
  const scraped = await app.inject({ url: '/metrics', headers: { authorization: `Bearer ${access_token}` } })
  t.equal(scraped.statusCode, 200, 'a reader token will do')
  t.match(scraped.body, /^http_request_duration_seconds_count/m)
  const documented = (await app.inject({ url: '/openapi.json' })).json().paths['/metrics'].get
  t.strictSame(documented.security, [{ accessToken: [] }], '/openapi.json says so')
  t.ok(documented.responses['401'], 'with its 401')
})

t.test('by default GET /metrics needs no token', async (t) => {
  const app = await build(t)
  t.equal((await app.inject({ url: '/metrics' })).statusCode, 200)
  const security = (await app.inject({ url: '/openapi.json' })).json().paths['/metrics'].get.security
  t.notOk(security?.length, 'documented without a token')
})
