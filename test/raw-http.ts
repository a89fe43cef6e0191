import { once } from 'node:events'
import { connect, type Socket } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'

export interface StalledResponse {
  socket: Socket
  status: number
  /** The status line and headers, lower case names. */
  headers: Record<string, string>
}

/**
 * A GET sent on a raw socket whose client reads the status line and headers, then stops reading:
 * the rest of the response stays in the kernel's buffers, as with a client that hung.
 */
export function stalledGet(port: number, path: string, token: string, { from }: { from?: string } = {}): Promise<StalledResponse> {
  // `from`: another loopback address (127.0.0.2, ...), so the client is one the service tells apart.
  const socket = connect({ port, host: '127.0.0.1', ...(from === undefined ? {} : { localAddress: from }) })
  // The server may reset the connection while nobody listens; that is the point of some tests.
  socket.on('error', () => {})
  return new Promise((resolve, reject) => {
    let received = ''
    const onData = (chunk: Buffer) => {
      received += chunk.toString('latin1')
      const end = received.indexOf('\r\n\r\n')
      if (end < 0) return
      socket.off('data', onData)
      socket.off('close', onClose)
      socket.pause()
      const [statusLine = '', ...fields] = received.slice(0, end).split('\r\n')
      const headers = Object.fromEntries(
        fields.map((field) => [field.slice(0, field.indexOf(':')).toLowerCase(), field.slice(field.indexOf(':') + 1).trim()])
      )
      resolve({ socket, status: Number(statusLine.split(' ')[1]), headers })
    }
    const onClose = () => reject(new Error(`connection closed before the headers: ${JSON.stringify(received)}`))
    socket.on('data', onData)
    socket.once('close', onClose)
    socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${token}\r\n\r\n`)
  })
}

/** The end of a chunked body. */
const LAST_CHUNK = '0\r\n\r\n'

/**
 * Reads what is left of a chunked response on a stalled socket (a paused socket notices that the
 * server closed the connection only when it reads again). `complete`: the body's last chunk came,
 * and the connection may stay open; otherwise it closed before.
 */
export function whatIsLeft(socket: Socket): Promise<{ complete: boolean }> {
  return new Promise((resolve) => {
    if (socket.destroyed) return resolve({ complete: false })
    let tail = ''
    socket.on('data', (chunk: Buffer) => {
      tail = (tail + chunk.toString('latin1')).slice(-LAST_CHUNK.length)
      if (tail === LAST_CHUNK) resolve({ complete: true })
    })
    socket.once('close', () => resolve({ complete: false }))
    socket.resume()
  })
}

/** Polls `condition` every 50 ms until it holds; throws naming `what` after `timeoutMs`. */
export async function untilTrue(condition: () => Promise<boolean> | boolean, what: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
    await sleep(50)
  }
}

/** Resolves with everything the server sends on `socket` until it closes the connection. */
const responseOf = (socket: Socket) =>
  new Promise<string>((resolve, reject) => {
    let received = ''
    socket.on('data', (chunk: Buffer) => (received += chunk.toString()))
    socket.on('close', () => resolve(received))
    socket.on('error', reject)
  })

export interface HalfSentWrite {
  /** All the server sent, the `100 Continue` included, once it ends the connection. */
  answer: Promise<string>
  /** Sends the body; resolves as `answer` does. */
  finish(): Promise<string>
}

/**
 * A `POST /v1/events` of one event whose headers have arrived and whose body is held back: the
 * request is surely in flight once this resolves, since `Expect: 100-continue` makes the server
 * say when it has the headers. `keepAlive`: the client asks to keep the connection and, having
 * sent the body, keeps its side open as a pooling client does (only the server can end it then).
 */
export async function halfSentWrite(port: number, token: string, eventNo: number, { keepAlive = false } = {}): Promise<HalfSentWrite> {
  const body = JSON.stringify([{ event_no: eventNo, timestamp_utc: '2024-05-01T10:00:00Z', snr: 10, known_source_name: 'EXT' }])
  const socket = connect(port, '127.0.0.1')
  await once(socket, 'connect')
  const answer = responseOf(socket)
  const continued = new Promise<Buffer>((resolve) => socket.once('data', resolve))
  socket.write(
    `POST /v1/events HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${token}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\nConnection: ${keepAlive ? 'keep-alive' : 'close'}\r\n\r\n`
  )
  const first = String(await continued)
  if (!first.startsWith('HTTP/1.1 100 Continue')) throw new Error(`expected 100 Continue, got ${first}`)
  return {
    answer,
    finish: () => {
      if (keepAlive) socket.write(body)
      else socket.end(body)
      return answer
    }
  }
}

/**
 * Connects to `port` again and again until a connection fails; resolves with its error code. A
 * server closing its listener refuses connections within moments of being told to.
 */
export function refusedConnection(port: number): Promise<string> {
  return new Promise<string>((resolve) => {
    const attempt = () => {
      const late = connect(port, '127.0.0.1')
      late.on('connect', () => (late.destroy(), setImmediate(attempt)))
      // A connection accepted just before the listener closed may be reset as idle: try again.
      late.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' ? setImmediate(attempt) : resolve(error.code ?? 'error')))
    }
    attempt()
  })
}
