import { once } from 'node:events'
import { connect, type Socket } from 'node:net'
import { join } from 'node:path'
import t from 'tap'
import { request, startServer } from './processes.js'

/** Resolves with everything the server sends on `socket` until it closes the connection. */
const responseOf = (socket: Socket) =>
  new Promise<string>((resolve, reject) => {
    let received = ''
    socket.on('data', (chunk: Buffer) => (received += chunk.toString()))
    socket.on('close', () => resolve(received))
    socket.on('error', reject)
  })

t.test('SIGTERM: the in-flight request finishes, new connections are refused, the process exits', async (t) => {
  const env = { TRACER_DB: join(t.testdir(), 'tracer.sqlite'), TRACER_ADMIN_PASSWORD: 'admin-password' }
  const server = await startServer(t, env)
  const login = await request(`${server.url}/auth`, { body: { username: 'admin', password: 'admin-password' } })
  const token = login.body.access_token as string
  const { port } = new URL(server.url)

  // A write whose body is not sent yet when the signal arrives. `Expect: 100-continue` makes the
  // server say when it has the headers, so the request is surely in flight before the signal.
  const body = JSON.stringify([{ event_no: 1, timestamp_utc: '2024-05-01T10:00:00Z', snr: 10, known_source_name: 'EXT' }])
  const socket = connect(Number(port), '127.0.0.1')
  await once(socket, 'connect')
  const answer = responseOf(socket)
  const continued = new Promise((resolve) => socket.once('data', resolve))
  socket.write(
    `POST /v1/events HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${token}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`
  )
  t.match(String(await continued), /^HTTP\/1\.1 100 Continue/)

  const exited = once(server.child, 'exit') as Promise<[number | null, string | null]>
  const started = Date.now()
  server.child.kill('SIGTERM')
  await server.lineMatching(/"msg":"closing"/)

  // Closing the listener follows the signal within moments: try until a connection is refused,
  // while the half-sent request is still waiting for its body.
  const refused = await new Promise<string>((resolve) => {
    const attempt = () => {
      const late = connect(Number(port), '127.0.0.1')
      late.on('connect', () => (late.destroy(), setImmediate(attempt)))
      // A connection accepted just before the listener closed may be reset as idle: try again.
      late.on('error', (error: NodeJS.ErrnoException) =>
        error.code === 'ECONNRESET' ? setImmediate(attempt) : resolve(error.code ?? 'error')
      )
    }
    attempt()
  })
  t.equal(refused, 'ECONNREFUSED', 'new connections are refused')

  socket.end(body)
  const raw = await answer
  t.match(raw, /\r\n\r\nHTTP\/1\.1 200 /, 'the in-flight write was answered')
  t.match(raw, /\{"upserted":1\}$/)

  const [code] = await exited
  t.equal(code, 0, 'a clean exit')
  t.ok(Date.now() - started < 10_000, 'within 10 s')
})
