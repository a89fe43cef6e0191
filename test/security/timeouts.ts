/**
 * A request that arrives too slowly is answered 408 RequestTimeout once REQUEST_TIMEOUT_MS have
 * passed since it began, even while its bytes keep trickling in. Node checks its request timeout
 * only every `connectionsCheckingInterval` (30 s unless told otherwise), and enforces the longer
 * `headersTimeout` instead while that is longer: without both set, a trickled body outlived the
 * timeout by up to a minute and a half.
 */
import { connect } from 'node:net'
import t from 'tap'
import { listen, parseRaw, securityApp, type RawAnswer } from './hostile.js'

const TIMEOUT_MS = 1000
/** Node's own default checking interval is 30 s: an answer well before that shows the timeout holds. */
const DEADLINE_MS = 10_000

const BODY_HEAD = 'POST /auth HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1024\r\n\r\n{'

/** Sends `head`, then `drop` every 100 ms (at most 1000 times) until the server answers and closes. */
function trickle(port: number, head: string, drop: string): Promise<{ answer: RawAnswer; elapsedMs: number; bytesSent: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now()
    const chunks: Buffer[] = []
    let bytesSent = 0
    const socket = connect({ port, host: '127.0.0.1' }, () => socket.write(head))
    const drip = setInterval(() => {
      if (socket.writable && bytesSent < 1000 * drop.length) socket.write(drop, () => (bytesSent += drop.length))
    }, 100)
    const deadline = setTimeout(() => {
      socket.destroy()
      reject(new Error(`no answer within ${DEADLINE_MS} ms; ${bytesSent} bytes trickled`))
    }, DEADLINE_MS)
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    socket.on('error', () => {})
    socket.on('close', () => {
      clearInterval(drip)
      clearTimeout(deadline)
      resolve({ answer: parseRaw(Buffer.concat(chunks).toString('latin1')), elapsedMs: Date.now() - started, bytesSent })
    })
  })
}

const cases: Record<string, [head: string, drop: string]> = {
  'a trickled body': [BODY_HEAD, ' '],
  'trickled headers': ['POST /auth HTTP/1.1\r\nHost: 127.0.0.1\r\n', 'X-Slow: 1\r\n']
}

for (const [name, [head, drop]] of Object.entries(cases)) {
  t.test(`${name}: 408 RequestTimeout at REQUEST_TIMEOUT_MS`, async (t) => {
    const { app } = await securityApp(t, { REQUEST_TIMEOUT_MS: String(TIMEOUT_MS) })
    const port = await listen(app)
    const { answer, elapsedMs, bytesSent } = await trickle(port, head, drop)
    t.equal(answer.statusCode, 408, answer.text.slice(0, 200))
    t.strictSame(JSON.parse(answer.body), { reasons: ['The request took too long to arrive.'], exception: 'RequestTimeout' })
    t.ok(elapsedMs >= TIMEOUT_MS, `not before the timeout (${elapsedMs} ms)`)
    t.ok(bytesSent > 0, `the request kept coming (${bytesSent} bytes)`)
    t.comment(`answered after ${elapsedMs} ms`)
  })
}

t.test('the timeouts are the configured ones', async (t) => {
  const { app } = await securityApp(t, { REQUEST_TIMEOUT_MS: '4000', KEEP_ALIVE_TIMEOUT_MS: '5000' })
  t.equal(app.server.requestTimeout, 4000)
  t.equal(app.server.headersTimeout, 4000, 'never longer than the request timeout, or Node enforces it instead')
  t.equal(app.server.keepAliveTimeout, 5000)
})
