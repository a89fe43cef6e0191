import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { stalledGet, untilTrue, whatIsLeft } from '../raw-http.js'
import { request, runCli, startServer } from './processes.js'

const SOCKETS = 100
/** The default of MAX_STREAMED_RESPONSES: the test holds the service as it is deployed to its bound. */
const MAX_STREAMED_RESPONSES = 32
const STALL_TIMEOUT_S = 2
// What the process's memory grows by meanwhile is a figure a busy machine moves: the bench
// measures it against its 50 MB target (bench/slow-readers.ts, issue 28, finding 4).

t.test(`${SOCKETS} clients that never read a year of baseband callbacks: bounded, dropped, and the service keeps serving`, async (t) => {
  // One user from one address holds every slot here, as the bound allows: its share is the whole
  // bound (fair-shares.test.ts holds a client to its share).
  const env = {
    TRACER_DB: join(t.testdir(), 'tracer.sqlite'),
    STREAM_STALL_TIMEOUT_S: String(STALL_TIMEOUT_S),
    MAX_STREAMED_RESPONSES_PER_CLIENT: String(MAX_STREAMED_RESPONSES)
  }
  // 60,000 events rather than the 20,000 of the report: a year of those is 3.6 MB of JSON, which
  // the kernel buffers of a loopback connection (4 MB) swallow whole, so the service would never
  // see a slow client. A year of 60,000 is about 11 MB: most of it has to wait for the client.
  const seeded = await runCli(['seed', '--demo', '--events', '60000', '--days', '365'], env)
  t.equal(seeded.status, 0, seeded.stderr)
  // A user before the first start, so that start seeds no demo data of its own.
  const added = await runCli(['users', 'add', 'operator', '--password-stdin'], env, 'operator-password\n')
  t.equal(added.status, 0, added.stderr)
  const server = await startServer(t, env)
  const login = await request(`${server.url}/auth`, { body: { username: 'operator', password: 'operator-password' } })
  const token = login.body.access_token as string
  const now = Date.now()
  const year =
    '/v1/event-tracer/baseband-callbacks' +
    `?start_time_utc=${new Date(now - 365 * 86_400_000).toISOString()}&end_time_utc=${new Date(now).toISOString()}`

  // Meanwhile: /health, asked again and again.
  let watching = true
  t.teardown(() => void (watching = false))
  const healthAnswers: (number | string)[] = []
  const watchHealth = (async () => {
    while (watching) {
      try {
        healthAnswers.push((await fetch(`${server.url}/health`, { signal: AbortSignal.timeout(5000) })).status)
      } catch (error) {
        healthAnswers.push((error as Error).name)
      }
      await sleep(100)
    }
  })()

  const { port } = new URL(server.url)
  const attempts = await Promise.allSettled(Array.from({ length: SOCKETS }, () => stalledGet(Number(port), year, token)))
  const alive = () => server.child.exitCode === null && server.child.signalCode === null
  const answered = attempts.flatMap((attempt) => (attempt.status === 'fulfilled' ? [attempt.value] : []))
  t.equal(answered.length, SOCKETS, 'every client got a status line')
  const streaming = answered.filter((response) => response.status === 200)
  const refused = answered.filter((response) => response.status === 503)
  t.equal(streaming.length + refused.length, answered.length, 'each got 200 or 503')
  t.ok(streaming.length >= 1 && streaming.length <= MAX_STREAMED_RESPONSES, `${streaming.length} streaming, at most the bound`)
  t.ok(refused.length >= SOCKETS - MAX_STREAMED_RESPONSES, `${refused.length} refused once the bound was reached`)
  t.ok(
    refused.every((response) => Number(response.headers['retry-after']) > 0),
    'each refusal says when to retry'
  )

  // The server drops each stalled client after the stall timeout (it logs each), and the client
  // then finds its connection closed before the body's end.
  const dropped = () => server.output.filter((line) => line.includes('its client stopped reading')).length
  await untilTrue(() => {
    if (!alive()) throw new Error(`the service exited (${server.child.exitCode ?? server.child.signalCode}) meanwhile`)
    return dropped() >= streaming.length
  }, `${streaming.length} stalled clients are dropped`)
  const left = await Promise.all(streaming.map((response) => whatIsLeft(response.socket)))
  t.ok(
    left.every(({ complete }) => !complete),
    'every stalled connection was closed by the server, its body incomplete'
  )
  for (const response of refused) response.socket.destroy()

  // Every slot is free again: a client that reads gets the whole year.
  const whole = await fetch(`${server.url}${year}`, { headers: { authorization: token } })
  t.equal(whole.status, 200)
  t.ok(((await whole.json()) as unknown[]).length > 10_000, 'the whole year')

  watching = false
  await watchHealth
  t.ok(alive(), 'the process is still up')
  t.ok(healthAnswers.length >= 5, `/health was asked ${healthAnswers.length} times meanwhile`)
  t.ok(
    healthAnswers.every((answer) => answer === 200),
    `/health answered 200 each time: ${JSON.stringify(healthAnswers.filter((answer) => answer !== 200))}`
  )
})
