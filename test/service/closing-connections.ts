import { once } from 'node:events'
import { connect } from 'node:net'
import t, { type Test } from 'tap'
import { build, userWithTokens, type App } from '../helper.js'
import { halfSentWrite } from '../raw-http.js'

/*
 * A closing server answers what is in flight, then lets no client hold it open: Node closes only
 * the connections idle when the close begins, and stops timing requests out once it has. Each case
 * here held `app.close()` (and so a SIGTERM) until SIGKILL before: a test that fails, fails by
 * its timeout (`timeout` below).
 */

const timeout = 20_000

async function listening(t: Test, options: Parameters<typeof build>[2] = {}) {
  const lines: Record<string, unknown>[] = []
  const app = await build(t, { LOG_LEVEL: 'warn' }, { ...options, logStream: { write: (line) => void lines.push(JSON.parse(line) as Record<string, unknown>) } })
  await app.listen({ port: 0, host: '127.0.0.1' })
  return { app, port: (app.server.address() as { port: number }).port, lines }
}

const writerToken = async (app: App) => (await userWithTokens(app, 'pipeline', 'writer')).access_token

t.test('a keep-alive request in flight when the close begins is answered, then its connection ends', { timeout }, async (t) => {
  const { app, port, lines } = await listening(t)
  const write = await halfSentWrite(port, await writerToken(app), 1, { keepAlive: true })
  const closed = app.close()
  // The body arrives once the close has begun: the connection was not idle when it did.
  const answer = await write.finish()
  t.match(answer, /\r\n\r\nHTTP\/1\.1 200 [^]*\{"upserted":1\}$/, 'the write is answered')
  t.match(answer.slice(answer.indexOf('HTTP/1.1 200')), /\r\nconnection: close\r\n/i, 'saying the connection ends with it')
  await closed
  t.notOk(lines.some((line) => /cut/.test(String(line.msg))), 'nothing was cut')
})

t.test('a live stream open when the close begins ends cleanly, and so does its connection', { timeout }, async (t) => {
  const { app, port, lines } = await listening(t)
  const socket = connect(port, '127.0.0.1')
  let received = ''
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')))
  await once(socket, 'connect')
  socket.write(`GET /v1/event-tracer/stream HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${await writerToken(app)}\r\n\r\n`)
  while (!received.includes(': stream open')) await once(socket, 'data')
  t.match(received, /\r\nconnection: keep-alive\r\n/i, 'a stream opened on a connection kept alive')
  // The client keeps its side open, as a pooling client does once a response ends.
  const [closed] = await Promise.all([once(socket, 'close'), app.close()])
  t.same(closed, [false], 'the server ended the connection')
  t.ok(received.endsWith('\r\n0\r\n\r\n'), 'after the stream’s last chunk')
  t.notOk(lines.some((line) => /cut/.test(String(line.msg))), 'nothing was cut')
})

t.test('an upload whose body has not come when the bound passes is cut, and the close ends', { timeout }, async (t) => {
  const { app, port, lines } = await listening(t, { draining: { cutConnectionsAfterMs: 100 } })
  // Its headers have arrived, its body never does.
  const upload = await halfSentWrite(port, await writerToken(app), 1, { keepAlive: true })
  await app.close()
  t.equal(await upload.answer, 'HTTP/1.1 100 Continue\r\n\r\n', 'the connection is cut, with no answer')
  t.match(lines, [{ level: 40, connections: 1, msg: 'closing: cut 1 connection still open after 100 ms' }], 'a warning says what was cut')
})
