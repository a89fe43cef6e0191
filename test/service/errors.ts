import { connect } from 'node:net'
import { PassThrough } from 'node:stream'
import t from 'tap'
import { clientErrorHandler } from '../../src/infrastructure/http/client-errors.js'
import { build, buildWithProbes } from '../helper.js'

const isEnvelope = (body: unknown) =>
  typeof body === 'object' &&
  body !== null &&
  Object.keys(body).sort().join() === 'exception,reasons' &&
  Array.isArray((body as { reasons: unknown }).reasons)

t.test('an unknown route is 404 NotFound', async (t) => {
  const app = await build(t)
  const response = await app.inject({ url: '/v2/nothing?x=1' })
  t.equal(response.statusCode, 404)
  t.strictSame(response.json(), { reasons: ['No route GET /v2/nothing.'], exception: 'NotFound' })
})

t.test('a known path with another method is 405 with Allow', async (t) => {
  const app = await build(t)
  const response = await app.inject({ method: 'PUT', url: '/auth/verify' })
  t.equal(response.statusCode, 405)
  t.equal(response.json().exception, 'MethodNotAllowed')
  t.match(response.headers.allow, /GET/)
  t.ok(isEnvelope(response.json()))
})

t.test('bodies that are not acceptable JSON', async (t) => {
  const app = await build(t)
  const post = (payload: string, contentType = 'application/json') =>
    app.inject({ method: 'POST', url: '/auth', payload, headers: { 'content-type': contentType } })

  const broken = await post('{"username": "ana", ')
  t.equal(broken.statusCode, 400)
  t.strictSame(broken.json(), { reasons: ['The body is not valid JSON.'], exception: 'BadRequest' })

  const empty = await post('')
  t.equal(empty.statusCode, 400)
  t.equal(empty.json().exception, 'BadRequest')

  const poisoned = await post('{"username": "ana", "password": "x", "__proto__": {"admin": true}}')
  t.equal(poisoned.statusCode, 400, '__proto__ is refused')
  t.equal(poisoned.json().exception, 'BadRequest')

  const xml = await post('<credentials/>', 'application/xml')
  t.equal(xml.statusCode, 415)
  t.equal(xml.json().exception, 'UnsupportedMediaType')
  // Fastify parses text/plain by default; this service reads none, so it is as unsupported as XML.
  const text = await post('{"username": "ana", "password": "x"}', 'text/plain')
  t.equal(text.statusCode, 415, 'text/plain is 415, not "body must be object"')
  t.equal(text.json().exception, 'UnsupportedMediaType')

  const huge = await post(JSON.stringify({ username: 'ana', password: 'x'.repeat(2 * 1024 * 1024) }))
  t.equal(huge.statusCode, 413)
  t.equal(huge.json().exception, 'PayloadTooLarge')
})

t.test('schema violations name the field and say why', async (t) => {
  const app = await build(t)
  const response = await app.inject({ method: 'POST', url: '/auth', payload: { username: 7, password: 'x' } })
  t.equal(response.statusCode, 400)
  t.strictSame(response.json(), { reasons: ['body.username must be string'], exception: 'BadRequest' })
})

t.test('a malformed URL is 400 in the envelope', async (t) => {
  const app = await build(t)
  const response = await app.inject({ url: '/auth/%E0%A4%A' })
  t.equal(response.statusCode, 400)
  t.ok(isEnvelope(response.json()))
})

t.test('an unexpected error is a masked 500 InternalError', async (t) => {
  const app = await buildWithProbes(t, (app) => {
    app.get('/probe-throws', async () => {
      throw new Error('database password is hunter2')
    })
  })
  const response = await app.inject({ url: '/probe-throws' })
  t.equal(response.statusCode, 500)
  t.strictSame(response.json(), { reasons: ['Internal error.'], exception: 'InternalError' })
  t.notMatch(response.body, /hunter2|stack|Error:/)
})

t.test('headers too large for the HTTP parser get the envelope as 431', async (t) => {
  const app = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const raw = await new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(`GET /auth/verify HTTP/1.1\r\nHost: x\r\nAuthorization: ${'a'.repeat(64 * 1024)}\r\n\r\n`)
    })
    let received = ''
    socket.on('data', (chunk: Buffer) => (received += chunk.toString()))
    socket.on('end', () => resolve(received))
    socket.on('error', reject)
  })
  t.match(raw, /^HTTP\/1\.1 431 /)
  t.ok(isEnvelope(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4))))
})

t.test('the HTTP layer statuses 408 and 400 are written as the envelope', async (t) => {
  for (const [code, status, exception] of [
    ['ERR_HTTP_REQUEST_TIMEOUT', 408, 'RequestTimeout'],
    ['HPE_INVALID_METHOD', 400, 'BadRequest']
  ] as const) {
    const socket = Object.assign(new PassThrough(), { writable: true })
    let written = ''
    socket.on('data', (chunk) => (written += chunk))
    const ended = new Promise((resolve) => socket.on('finish', resolve))
    clientErrorHandler(Object.assign(new Error('x'), { code }), socket as never)
    await ended
    t.match(written, new RegExp(`^HTTP/1\\.1 ${status} `), code)
    t.equal(JSON.parse(written.slice(written.indexOf('\r\n\r\n') + 4)).exception, exception)
  }
})

t.test('a request that reaches a closing server gets the 503 envelope, not Fastify’s own body', async (t) => {
  const app = await build(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const socket = connect(port, '127.0.0.1')
  let received = ''
  socket.on('data', (chunk: Buffer) => (received += chunk.toString()))
  const ended = new Promise((resolve) => socket.on('close', resolve))
  await new Promise((resolve) => socket.on('connect', resolve))
  // The request is written in the same tick as close() begins: the server reads it only after its
  // preClose hooks have run, so it reaches a closing server on an open connection.
  socket.write('GET /version HTTP/1.1\r\nHost: x\r\n\r\n')
  const closed = app.close()
  await ended
  await closed
  t.match(received, /^HTTP\/1\.1 503 /)
  t.match(received, /\r\nConnection: close\r\n/i)
  t.match(received, /\r\n\r\n\{"reasons":\["The service is shutting down; try again\."\],"exception":"ServiceUnavailable"\}$/)
})
