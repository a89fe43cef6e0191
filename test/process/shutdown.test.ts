import { once } from 'node:events'
import { join } from 'node:path'
import t from 'tap'
import { request, startServer } from './processes.js'
import { halfSentWrite, refusedConnection } from '../raw-http.js'

t.test('SIGTERM: the in-flight request finishes, new connections are refused, the process exits', async (t) => {
  const env = { TRACER_DB: join(t.testdir(), 'tracer.sqlite'), TRACER_ADMIN_PASSWORD: 'admin-password' }
  const server = await startServer(t, env)
  const login = await request(`${server.url}/auth`, { body: { username: 'admin', password: 'admin-password' } })
  const token = login.body.access_token as string
  const { port } = new URL(server.url)

  // A write whose body is not sent yet when the signal arrives.
  const write = await halfSentWrite(Number(port), token, 1)

  const exited = once(server.child, 'exit') as Promise<[number | null, string | null]>
  const started = Date.now()
  server.child.kill('SIGTERM')
  await server.lineMatching(/"msg":"closing"/)
  // Closing the listener follows the signal within moments, while the half-sent request is still waiting for its body.
  t.equal(await refusedConnection(Number(port)), 'ECONNREFUSED', 'new connections are refused')

  const raw = await write.finish()
  t.match(raw, /\r\n\r\nHTTP\/1\.1 200 /, 'the in-flight write was answered')
  t.match(raw, /\{"upserted":1\}$/)

  const [code] = await exited
  t.equal(code, 0, 'a clean exit')
  t.ok(Date.now() - started < 10_000, 'within 10 s')
})
