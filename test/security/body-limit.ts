/**
 * The body limit (1 MiB, serverOptions in src/app.ts) answers 413 PayloadTooLarge in the envelope on
 * every route that takes a body, whether the size is announced (Content-Length) or not (chunked),
 * for JSON and NDJSON; a body of exactly the limit is read.
 */
import t from 'tap'
import { contractViolation, listen, rawAsAnswer, rawRequest, securityApp } from './hostile.js'

const LIMIT = 1024 * 1024

const { app, routes, writer } = await securityApp(t)
t.equal(app.initialConfig.bodyLimit, LIMIT, 'the limit is 1 MiB')

/** Every route that takes a body, with its path parameters filled in. */
const bodyRoutes = routes
  .filter((route) => ['POST', 'PUT', 'PATCH', 'DELETE'].includes(route.method))
  .map((route) => ({ method: route.method, url: route.url.replace(':event_no', '1').replace(':member', 'intensity') }))

/** JSON of exactly `size` bytes: an object whose one member is padding. */
const jsonOfSize = (size: number) => {
  const frame = '{"pad":""}'
  return `{"pad":"${'x'.repeat(size - frame.length)}"}`
}

t.test('every route that takes a body is listed', async (t) => {
  t.strictSame(
    bodyRoutes.map((route) => `${route.method} ${route.url}`).sort(),
    [
      'POST /auth',
      'POST /auth/refresh',
      'POST /v1/event-tracer/create-trace',
      'POST /v1/event-tracer/heartbeats',
      'POST /v1/event-tracer/update-trace',
      'POST /v1/events',
      'POST /v1/events/get_events',
      'PUT /v1/event-tracer/datatrail/1/intensity'
    ],
    'a new body route joins this list (and this suite) by itself; update the expectation'
  )
})

t.test('one byte over the limit, and far over it, is 413 PayloadTooLarge on every body route', async (t) => {
  for (const { method, url } of bodyRoutes) {
    const types = url === '/v1/events' ? ['application/json', 'application/x-ndjson'] : ['application/json']
    for (const contentType of types) {
      for (const size of [LIMIT + 1, 2 * LIMIT, 10 * LIMIT]) {
        const response = await app.inject({
          method: method as 'POST',
          url,
          headers: { authorization: writer, 'content-type': contentType },
          payload: jsonOfSize(size)
        })
        const label = `${method} ${url} ${contentType} ${size} bytes`
        t.equal(response.statusCode, 413, label)
        t.strictSame(response.json(), { reasons: ['The body is larger than this service accepts.'], exception: 'PayloadTooLarge' }, label)
      }
    }
  }
})

t.test('a body of exactly the limit is read: never 413, and the answer keeps the contract', async (t) => {
  for (const { method, url } of bodyRoutes) {
    const request = { method, url, headers: { authorization: writer, 'content-type': 'application/json' }, payload: jsonOfSize(LIMIT) }
    const response = await app.inject({ ...request, method: method as 'POST' })
    t.not(response.statusCode, 413, `${method} ${url}`)
    t.equal(contractViolation(request, { statusCode: response.statusCode, headers: response.headers, body: response.body }), undefined, `${method} ${url}: ${response.statusCode}`)
  }
})

t.test('over a socket, without Content-Length (chunked), the limit still holds', async (t) => {
  const port = await listen(app)
  for (const { method, url } of bodyRoutes) {
    const body = jsonOfSize(LIMIT + 4096)
    const chunks = body.match(/[\s\S]{1,65536}/g)!.map((chunk) => `${chunk.length.toString(16)}\r\n${chunk}\r\n`)
    const head = [`${method} ${url} HTTP/1.1`, 'Host: x', `Authorization: ${writer}`, 'Content-Type: application/json', 'Transfer-Encoding: chunked', 'Connection: close']
    const raw = await rawRequest(port, `${head.join('\r\n')}\r\n\r\n${chunks.join('')}0\r\n\r\n`)
    t.equal(raw.statusCode, 413, `${method} ${url}, chunked`)
    t.equal(contractViolation({ method, url, headers: {} }, rawAsAnswer(raw)), undefined, `${method} ${url}: the envelope`)
    t.equal(JSON.parse(raw.body).exception, 'PayloadTooLarge')
  }
  // A Content-Length that announces more than the limit is refused before the body is read.
  const announced = await rawRequest(port, `POST /auth HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${100 * LIMIT}\r\nConnection: close\r\n\r\n{}`)
  t.equal(announced.statusCode, 413, 'Content-Length of 100 MiB with a 2-byte body')
  const health = await rawRequest(port, 'GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
  t.equal(health.statusCode, 200, 'still serving')
})
