import { copyFileSync, existsSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import t, { type Test } from 'tap'
import { loadConfig, type ConfigInput } from '../../src/config.js'
import { toEventRecord } from '../../src/domain/events.js'
import { openStore } from '../../src/store/open.js'
import { TEST_SECRET } from '../helper.js'
import { assertRetryLater, event, get, putEvents, tracerApp } from './fixtures.js'
import { stalledGet, untilTrue, whatIsLeft } from '../raw-http.js'

const url = (start: string, end: string) => `/v1/event-tracer/baseband-callbacks?start_time_utc=${start}&end_time_utc=${end}`
/** 12,000 traced events, one a minute: about 11 MB of JSON, more than a loopback socket's kernel buffers hold. */
const BIG = url('2024-05-01', '2024-05-10')
/** An empty window: a streamed response that takes a slot for a moment, to see whether one is free. */
const EMPTY = url('2023-01-01', '2023-01-02')

/**
 * A closed SQLite store at `file` holding BIG's events, each traced, written as putEvents writes
 * them. Written once for the tests that need it, each of which then opens a copy of its own:
 * writing 12,000 events took longer than any of those tests took with them.
 */
async function seedBig(file: string) {
  const config = loadConfig({ TRACER_DB: file, JWT_SECRET: TEST_SECRET, LOG_LEVEL: 'silent' })
  const store = await openStore(config)
  const start = Date.parse('2024-05-01T00:00:00Z')
  const events = Array.from({ length: 12_000 }, (_, i) => event(i + 1, new Date(start + i * 60_000).toISOString()))
  const now = Date.now() / 1000
  await store.events.upsert(events.map((input) => toEventRecord(input, config.TRACER_SITES, now)))
  await store.traces.upsert(events.map(({ event_no }) => ({ event_no })))
  await store.close()
  if (existsSync(`${file}-wal`)) throw new Error(`${file} kept a write-ahead log once closed: a copy of the file alone would miss it`)
}

const readAll = async (stream: Readable) => {
  const chunks: Buffer[] = []
  for await (const chunk of stream) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

t.test('beyond MAX_STREAMED_RESPONSES: 503 with Retry-After in the envelope; the slot is free again once sent', async (t) => {
  const { app, reader } = await tracerApp(t, { MAX_STREAMED_RESPONSES: '1' })
  const start = Date.parse('2024-05-01T00:00:00Z')
  await putEvents(app, Array.from({ length: 1234 }, (_, i) => event(i, new Date(start + i * 60_000).toISOString())))
  // A client that has its headers but reads nothing yet keeps the only slot.
  const holder = await app.inject({ url: url('2024-05-01', '2024-05-03'), headers: { authorization: reader }, payloadAsStream: true })
  t.equal(holder.statusCode, 200)

  const refused = await get(app, EMPTY, reader)
  assertRetryLater(t, refused, 'This instance is already streaming 1 responses, the most it serves at once; try again shortly.')

  t.equal(JSON.parse(await readAll(holder.stream())).length, 1234, 'the held response is whole')
  const next = await get(app, EMPTY, reader)
  t.equal(next.statusCode, 200, 'its slot was given back')
  t.equal(next.body, '[]')
})

t.test('a window of 12,000 traced events, more than the kernel holds for a client that stops reading', async (t) => {
  const dir = t.testdir()
  const seed = join(dir, 'seed.sqlite')
  await seedBig(seed)
  let copies = 0
  /** An app on a copy of its own of the seeded store, listening on a free port for raw sockets. */
  async function bigApp(t: Test, env: ConfigInput) {
    const file = join(dir, `copy-${++copies}.sqlite`)
    copyFileSync(seed, file)
    const { app, reader } = await tracerApp(t, { ...env, TRACER_DB: file })
    await app.listen({ port: 0, host: '127.0.0.1' })
    return { app, reader, port: (app.server.address() as AddressInfo).port }
  }

  t.test('the slot of a client that disconnects is free at once, long before the stall timeout', async (t) => {
    const { app, reader, port } = await bigApp(t, { MAX_STREAMED_RESPONSES: '1', STREAM_STALL_TIMEOUT_S: '3600' })
    const holder = await stalledGet(port, BIG, reader)
    t.equal(holder.status, 200)
    t.equal((await get(app, EMPTY, reader)).statusCode, 503, 'the client that does not read holds the slot')

    holder.socket.destroy()
    await untilTrue(async () => (await get(app, EMPTY, reader)).statusCode === 200, 'a slot is free after the disconnect')
    t.pass('freed')
  })

  t.test('a client that takes nothing for STREAM_STALL_TIMEOUT_S is disconnected and its slot freed', async (t) => {
    const { app, reader, port } = await bigApp(t, { MAX_STREAMED_RESPONSES: '1', STREAM_STALL_TIMEOUT_S: '1' })
    const holder = await stalledGet(port, BIG, reader)
    t.equal(holder.status, 200)
    t.equal((await get(app, EMPTY, reader)).statusCode, 503, 'the client that does not read holds the slot')
    await untilTrue(async () => (await get(app, EMPTY, reader)).statusCode === 200, 'a slot is free after the stall timeout')

    // Only now does the client read again: what the kernel still held, then the connection ends.
    t.strictSame(await whatIsLeft(holder.socket), { complete: false }, 'the server closed it, the body cut short')
  })

  t.test('closing the server drops a client that does not read within a second, not after the stall timeout', async (t) => {
    const { app, reader, port } = await bigApp(t, { STREAM_STALL_TIMEOUT_S: '3600' })
    const holder = await stalledGet(port, BIG, reader)
    t.equal(holder.status, 200)
    // A timer the test clears once close is done: the 15 s are a bound on a hang, and must not fire
    // (and assert) after the test has ended.
    let timer: NodeJS.Timeout | undefined
    const hung = new Promise<'hung'>((resolve) => (timer = setTimeout(() => resolve('hung'), 15_000)))
    const outcome = await Promise.race([app.close().then(() => 'closed' as const), hung])
    clearTimeout(timer)
    t.equal(outcome, 'closed', 'close did not wait for the stalled client')
    t.strictSame(await whatIsLeft(holder.socket), { complete: false }, 'the stalled connection was closed')
  })
})

t.test('byte for byte the JSON array, across chunk and page boundaries, through a socket and through inject', async (t) => {
  const { app, reader } = await tracerApp(t)
  const start = Date.parse('2024-05-01T00:00:00Z')
  // Multi-byte characters throughout, so some are cut between two chunks of bytes.
  const named = (i: number) => ({ known_source_name: `Ŝ-${i}-✓ B0329+54 ☄️` })
  await putEvents(app, Array.from({ length: 1001 }, (_, i) => event(i + 1, new Date(start + i * 60_000).toISOString(), named(i))))
  await app.store.traces.upsert(Array.from({ length: 501 }, (_, i) => ({ event_no: 2 * i + 1 })))
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  // 0 events, 1, exactly one page (500), one more than a page, and two pages and one.
  for (const count of [0, 1, 500, 501, 1001]) {
    const window = url('2024-04-30', new Date(start + count * 60_000).toISOString())
    const viaSocket = await (await fetch(`http://127.0.0.1:${port}${window}`, { headers: { authorization: reader } })).text()
    const records = JSON.parse(viaSocket) as { event_no: number; known_source_name: string; trace?: object }[]
    t.equal(records.length, count, `${count} events`)
    t.ok(
      records.every((record, i) => record.event_no === i + 1 && record.known_source_name === named(i).known_source_name),
      'in order, names intact'
    )
    t.equal(records.filter((record) => record.trace !== undefined).length, Math.ceil(count / 2), 'traces where stored')
    t.equal(viaSocket, JSON.stringify(records), 'compact JSON: nothing lost or doubled at a boundary')
    t.equal((await get(app, window, reader)).body, viaSocket, 'the same bytes through inject')
  }
})
