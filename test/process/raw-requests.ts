import { once } from 'node:events'
import { connect, type Socket } from 'node:net'

/** Resolves with everything the server sends on `socket` until it closes the connection. */
const responseOf = (socket: Socket) =>
  new Promise<string>((resolve, reject) => {
    let received = ''
    socket.on('data', (chunk: Buffer) => (received += chunk.toString()))
    socket.on('close', () => resolve(received))
    socket.on('error', reject)
  })

export interface HalfSentWrite {
  /** Sends the body; resolves with all the server sent, the `100 Continue` included. */
  finish(): Promise<string>
}

/**
 * A `POST /v1/events` of one event whose headers have arrived and whose body is held back: the
 * request is surely in flight once this resolves, since `Expect: 100-continue` makes the server
 * say when it has the headers.
 */
export async function halfSentWrite(port: number, token: string, eventNo: number): Promise<HalfSentWrite> {
  const body = JSON.stringify([{ event_no: eventNo, timestamp_utc: '2024-05-01T10:00:00Z', snr: 10, known_source_name: 'EXT' }])
  const socket = connect(port, '127.0.0.1')
  await once(socket, 'connect')
  const answer = responseOf(socket)
  const continued = new Promise<Buffer>((resolve) => socket.once('data', resolve))
  socket.write(
    `POST /v1/events HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${token}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`
  )
  const first = String(await continued)
  if (!first.startsWith('HTTP/1.1 100 Continue')) throw new Error(`expected 100 Continue, got ${first}`)
  return {
    finish: () => {
      socket.end(body)
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
