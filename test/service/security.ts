import t from 'tap'
import { build } from '../helper.js'

t.test('JSON responses carry headers for an API: nothing may load or frame them', async (t) => {
  const app = await build(t)
  for (const url of ['/version', '/auth/verify', '/no/such/route']) {
    const response = await app.inject({ url })
    t.equal(response.headers['content-security-policy'], "default-src 'none';frame-ancestors 'none'", url)
    t.equal(response.headers['x-content-type-options'], 'nosniff', url)
    t.ok(response.headers['strict-transport-security'], url)
    t.notOk(response.headers['x-powered-by'], url)
    t.notOk(response.headers['access-control-allow-origin'], `${url}: CORS is off by default`)
  }
  const docs = await app.inject({ url: '/docs/' })
  t.match(docs.headers['content-security-policy'], /script-src 'self'/, 'the docs page may run its own scripts')
})

t.test('CORS only for the configured origins', async (t) => {
  const app = await build(t, { CORS_ORIGINS: 'https://frb.example.org,https://ops.example.org' })
  const preflight = await app.inject({
    method: 'OPTIONS',
    url: '/v1/events',
    headers: { origin: 'https://ops.example.org', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' }
  })
  t.equal(preflight.statusCode, 204)
  t.equal(preflight.headers['access-control-allow-origin'], 'https://ops.example.org')
  t.match(preflight.headers['access-control-allow-headers'], /Authorization/)

  const allowed = await app.inject({ url: '/version', headers: { origin: 'https://frb.example.org' } })
  t.equal(allowed.headers['access-control-allow-origin'], 'https://frb.example.org')
  t.equal(
    allowed.headers['access-control-expose-headers'],
    'X-Total-Count, X-Heartbeats-Total, Link, Retry-After',
    'a page’s total and next link, and when to retry, are readable from the allowed origins'
  )

  const foreign = await app.inject({ url: '/version', headers: { origin: 'https://evil.example' } })
  t.equal(foreign.statusCode, 200)
  t.notOk(foreign.headers['access-control-allow-origin'], 'another origin gets no CORS grant')
  t.equal((await app.inject({ url: '/no/such/route' })).statusCode, 404, 'the preflight route does not turn 404s into 405s')
})
