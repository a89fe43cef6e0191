import { join } from 'node:path'
import { createInterface } from 'node:readline'
import t from 'tap'
import { HOLD_MS, lockHolder } from '../../bench/lock-held.js'
import { end, spawnOwned } from '../owned-processes.js'
import { request, runCli, startServer } from './processes.js'

// Issue 29, finding 5: another process holding SQLite's write lock must not freeze the instance.
// The holder is a process of its own, as `sqlite3 … BEGIN IMMEDIATE`, `tracer import` or another
// instance's maintenance would be. What is asserted is counted (answers, statuses, which came
// while a write was still waiting), never a time; the slowest answer is printed for the reader.

const BUSY_TIMEOUT_MS = 3000

interface Probe {
  answered: number
  statuses: Map<number, number>
  slowestMs: number
}

const probe = (): Probe => ({ answered: 0, statuses: new Map(), slowestMs: 0 })

async function timed(into: Probe, send: () => Promise<{ status: number; headers?: Headers }>) {
  const started = performance.now()
  const { status } = await send()
  into.slowestMs = Math.max(into.slowestMs, performance.now() - started)
  into.answered += 1
  into.statuses.set(status, (into.statuses.get(status) ?? 0) + 1)
}

t.test('another process holds the write lock for 12 s: /health and reads go on answering, writes answer 200 or 503 with Retry-After', async (t) => {
  const env = { TRACER_DB: join(t.testdir(), 'tracer.sqlite'), SQLITE_BUSY_TIMEOUT_MS: String(BUSY_TIMEOUT_MS) }
  const added = await runCli(['users', 'add', 'pipeline', '--role', 'writer', '--password-stdin'], env, 'pipeline-password\n')
  t.equal(added.status, 0, added.stderr)
  const { url } = await startServer(t, env)
  const login = await request(`${url}/auth`, { body: { username: 'pipeline', password: 'pipeline-password' } })
  const token = login.body.access_token as string
  const authorization = { authorization: token }
  const write = (eventNo: number) =>
    fetch(`${url}/v1/event-tracer/update-trace`, {
      method: 'POST',
      headers: { ...authorization, 'content-type': 'application/json' },
      body: JSON.stringify({ event: eventNo, site: 'chime', stage: 'baseband_conversion', status: 'complete' })
    })
  t.equal((await write(1)).status, 200, 'a write before the lock is taken')

  const holder = spawnOwned(process.execPath, ['--input-type=module', '-e', lockHolder(HOLD_MS)], { env: { PATH: process.env.PATH ?? '', TRACER_DB: env.TRACER_DB }, stdio: ['ignore', 'pipe', 'inherit'] })
  t.teardown(() => end(holder))
  const said = createInterface({ input: holder.stdout! })
  const lines = said[Symbol.asyncIterator]()
  t.equal((await lines.next()).value, 'held', 'the other process holds the write lock')
  let held = true
  const released = lines.next().then(({ value }) => {
    held = false
    return value as string
  })

  const health = probe()
  const reads = probe()
  const writes = probe()
  let answeredWhileWriteWaited = 0
  const writeAnswers: { status: number; retryAfter: string | null }[] = []
  // Writes one after another while the lock is held: each waits off the event loop until the lock
  // is given back or its budget is spent.
  const writer = (async () => {
    for (let eventNo = 2; held; eventNo++) {
      const before = health.answered + reads.answered
      await timed(writes, async () => {
        const response = await write(eventNo)
        writeAnswers.push({ status: response.status, retryAfter: response.headers.get('retry-after') })
        await response.arrayBuffer()
        return response
      })
      answeredWhileWriteWaited = Math.max(answeredWhileWriteWaited, health.answered + reads.answered - before)
    }
  })()
  while (held) {
    await timed(health, () => fetch(`${url}/health`).then(async (response) => (await response.arrayBuffer(), response)))
    await timed(reads, () => fetch(`${url}/v1/event-tracer/event-status/1`, { headers: authorization }).then(async (response) => (await response.arrayBuffer(), response)))
  }
  t.equal(await released, 'released', 'the other process gave the lock back')
  await writer

  t.comment(`while held: ${health.answered} /health (slowest ${health.slowestMs.toFixed(0)} ms), ${reads.answered} reads (slowest ${reads.slowestMs.toFixed(0)} ms), ${writes.answered} writes`)
  t.strictSame([...health.statuses.keys()], [200], 'every /health answered 200')
  t.strictSame([...reads.statuses.keys()], [200], 'every read answered 200')
  t.ok(answeredWhileWriteWaited >= 5, `${answeredWhileWriteWaited} /health and reads answered while one write waited for the lock`)
  const refused = writeAnswers.filter((answer) => answer.status === 503)
  t.ok(refused.length > 0, `writes past the ${BUSY_TIMEOUT_MS} ms budget answered 503 (${refused.length})`)
  t.ok(refused.every((answer) => answer.retryAfter !== null && Number(answer.retryAfter) > 0), 'each with Retry-After')
  t.strictSame(
    writeAnswers.filter((answer) => answer.status !== 503 && answer.status !== 200),
    [],
    'no write answered anything but 200 or 503'
  )
  t.equal((await write(10_000)).status, 200, 'a write once the lock is given back')
})
