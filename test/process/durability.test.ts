import { join } from 'node:path'
import t from 'tap'
import { request, startServer } from './processes.js'

t.test('every write answered 2xx survives kill -9 of the server mid-stream', async (t) => {
  const env = { TRACER_DB: join(t.testdir(), 'tracer.sqlite'), TRACER_ADMIN_PASSWORD: 'admin-password' }
  const first = await startServer(t, env)
  const token = (await request(`${first.url}/auth`, { body: { username: 'admin', password: 'admin-password' } })).body
    .access_token as string

  // Eight clients write events and trace updates until 300 writes are acknowledged, then the
  // server is killed while their next requests are in flight.
  const events = new Set<number>()
  const traces = new Set<number>()
  let next = 0
  let killed = false
  const exited = new Promise((resolve) => first.child.once('exit', resolve))
  const client = async () => {
    while (!killed) {
      const n = next++
      const isEvent = n % 2 === 0
      try {
        const response = isEvent
          ? await request(`${first.url}/v1/events`, {
              token,
              body: [{ event_no: n, timestamp_utc: '2024-05-01T10:00:00Z', snr: 10, known_source_name: 'EXT' }]
            })
          : await request(`${first.url}/v1/event-tracer/update-trace`, {
              token,
              body: { event: n, site: 'kko', stage: 'data_registration', status: 'complete' }
            })
        if (response.status !== 200) throw new Error(`write ${n} answered ${response.status}`)
        ;(isEvent ? events : traces).add(n)
        if (events.size + traces.size >= 300 && !killed) {
          killed = true
          first.child.kill('SIGKILL')
        }
      } catch (error) {
        if (!killed) throw error
        // Killed with this request in flight: its outcome is unknown, so it is not checked.
      }
    }
  }
  await Promise.all(Array.from({ length: 8 }, client))
  await exited
  t.ok(events.size + traces.size >= 300, `${events.size + traces.size} writes acknowledged before the kill`)

  const second = await startServer(t, env)
  const lost: string[] = []
  for (const n of events) {
    if ((await request(`${second.url}/v1/events/${n}`, { token })).status !== 200) lost.push(`event ${n}`)
  }
  for (const n of traces) {
    const status = await request(`${second.url}/v1/event-tracer/event-status/${n}`, { token })
    const trace = status.body.trace as Record<string, string> | undefined
    if (trace?.['stages/data_registration/sites/kko'] !== 'complete') lost.push(`trace ${n}`)
  }
  t.strictSame(lost, [], 'nothing acknowledged was lost')
})
