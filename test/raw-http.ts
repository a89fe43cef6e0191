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
