import type { Test } from 'tap'
import type { HeartbeatInput } from '../../schemas/heartbeats.js'
import type { EventRecord, OutputRow } from '../../src/domain/records.js'
import { traceOutput } from '../../src/domain/trace.js'
import { keysetPages } from '../../src/store/pages.js'
import type { Store } from '../../src/store/port.js'
import { siteModel } from '../../src/vocabulary.js'
import type { OpenStore } from './conformance.js'

const T0 = Date.parse('2024-05-01T00:00:00Z')
const MINUTE = 60_000

const stored = (event_no: number, minutes: number, overrides: Partial<EventRecord> = {}): EventRecord => ({
  event_no,
  timestamp: T0 + minutes * MINUTE,
  snr: 10 + event_no,
  dm: event_no % 2 === 0 ? null : 100.5,
  known_source_name: event_no % 3 === 0 ? 'B0329+54' : 'EXT',
  tsar_classification: event_no % 2 === 0 ? null : 'astrophysical',
  actions: { want: { baseband: event_no % 2 === 1 }, got: {} },
  baseband_requested: event_no % 2 === 1,
  update_timestamp: 1_714_521_600.5,
  ...overrides
})

const heartbeat = (heartbeat_id: number, event_no = 1, total_data_files = 1): HeartbeatInput => ({
  event_no,
  heartbeat_id,
  site: 'kko',
  sent: { trigger_time: '2024-05-01T00:00:05Z', error: null },
  received: { total_data_files, dir_size_gb: 1.5, finished_time: null, heartbeat_sent_unix_s: 1_714_521_605 }
})

const numbers = (rows: OutputRow[]) => rows.map((row) => row.position.event_no)
const window = (fromMinutes: number, toMinutes: number) => ({ start: T0 + fromMinutes * MINUTE, end: T0 + toMinutes * MINUTE })

/** The baseband-callback scan as the route reads it: keyset pages of the views' callback pages. */
const callbackPages = (store: Store, scan: ReturnType<typeof window>, pageSize: number) =>
  keysetPages((after, limit) => store.views.callbackPage(scan, after, limit), (row) => row.position, pageSize)

/** The event-tracer half of the store conformance suite. */
export function tracerConformance(t: Test, open: OpenStore) {
  t.test('events: upsert, find, replace', async (t) => {
    const store = await open(t)
    t.equal(await store.events.upsert([stored(1, 0), stored(2, 1)]), 2)
    t.strictSame(await store.events.find(1), stored(1, 0))
    t.strictSame(await store.events.find(2), stored(2, 1), 'null dm and classification survive')
    t.equal(await store.events.find(3), null)
    await store.events.upsert([stored(1, 5, { snr: 99, actions: { want: {}, got: { intensity: true } }, baseband_requested: false })])
    t.match(await store.events.find(1), { snr: 99, timestamp: T0 + 5 * MINUTE, actions: { want: {}, got: { intensity: true } }, baseband_requested: false })
    t.equal(await store.events.upsert([]), 0)
  })

  t.test('events: findMany gives the stored events of the numbers asked, each once', async (t) => {
    const store = await open(t)
    const large = Number.MAX_SAFE_INTEGER
    await store.events.upsert([stored(1, 0), stored(2, 1), stored(3, 2), stored(large, 3)])
    const found = await store.events.findMany([3, 99, 1, 3, large, 0])
    t.strictSame(found.sort((a, b) => a.event_no - b.event_no), [stored(1, 0), stored(3, 2), stored(large, 3)], 'unknown numbers left out, a repeat once')
    t.strictSame(await store.events.findMany([99]), [])
    const many = Array.from({ length: 1000 }, (_, i) => i + 1)
    t.equal((await store.events.findMany(many)).length, 3, 'a thousand numbers in one read')
  })

  t.test('events: half-open window, both orders, ties by event_no, positions, limits', async (t) => {
    const store = await open(t)
    await store.events.upsert([stored(4, 10), stored(3, 10), stored(1, 0), stored(2, 5), stored(5, 20)])
    const list = (query: Partial<Parameters<typeof store.events.page>[0]> = {}) =>
      store.events.page({ window: window(0, 20), order: 'asc', limit: 100, ...query }).then(numbers)
    t.strictSame(await list(), [1, 2, 3, 4], 'start in, end out')
    t.strictSame(await list({ order: 'desc' }), [4, 3, 2, 1])
    t.strictSame(await list({ limit: 2 }), [1, 2])
    t.strictSame(await list({ after: { timestamp: T0 + 10 * MINUTE, event_no: 3 } }), [4])
    t.strictSame(await list({ order: 'desc', after: { timestamp: T0 + 10 * MINUTE, event_no: 4 } }), [3, 2, 1])
    t.strictSame(await list({ window: window(5, 10) }), [2])
  })

  t.test('events: filters', async (t) => {
    const store = await open(t)
    await store.events.upsert([1, 2, 3, 4, 5, 6].map((n) => stored(n, n)))
    const list = (query: Partial<Parameters<typeof store.events.page>[0]>) =>
      store.events.page({ window: window(0, 60), order: 'asc', limit: 100, ...query }).then(numbers)
    t.strictSame(await list({ minSnr: 14 }), [4, 5, 6])
    t.strictSame(await list({ maxSnr: 12 }), [1, 2])
    t.strictSame(await list({ knownSourceName: 'B0329+54' }), [3, 6])
    t.strictSame(await list({ basebandRequested: true }), [1, 3, 5])
    t.strictSame(await list({ basebandRequested: false, minSnr: 13 }), [4, 6])
  })

  t.test('baseband callbacks: requested only, ascending, in pages, with traces', async (t) => {
    const store = await open(t)
    await store.events.upsert([7, 1, 3, 5, 2, 9, 11].map((n) => stored(n, n === 11 ? 60 : 10 - n)))
    await store.traces.upsert([{ event_no: 3, 'stages/tsar_classification': 'complete', note: 'kept' }])
    const pages: OutputRow[][] = []
    for await (const page of callbackPages(store, window(0, 60), 2)) pages.push(page)
    t.strictSame(pages.map((page) => page.map((row) => row.position.event_no)), [[9, 7], [5, 3], [1]], 'at most 2 a page; 11 is at the end, out')
    t.strictSame(pages.flat()[0]?.position, { timestamp: T0 + MINUTE, event_no: 9 }, 'each row says where it stands')
    const element = (eventNo: number) => JSON.parse(pages.flat().find((row) => row.position.event_no === eventNo)!.json) as Record<string, unknown>
    const { event_no, snr, known_source_name } = stored(3, 7)
    const trace = element(3).trace as Record<string, unknown>
    t.strictSame(Object.keys(element(3)), ['event_no', 'snr', 'known_source_name', 'timestamp_utc', 'trace'], 'the members in the order of the schema')
    t.match(element(3), { event_no, snr, known_source_name, timestamp_utc: '2024-05-01T00:07:00.000Z' })
    t.equal(trace['stages/tsar_classification'], 'complete', 'the trace as clients read it')
    t.equal(trace.note, undefined, 'keys of no site are not output')
    t.equal(trace['stages/baseband_callback_request/sites/kko'], 'incomplete', 'a key the document lacks reads incomplete')
    t.strictSame(Object.keys(element(5)), ['event_no', 'snr', 'known_source_name', 'timestamp_utc'], 'no trace, no trace member')
    let none = 0
    for await (const _ of callbackPages(store, window(100, 200), 2)) none++
    t.equal(none, 0, 'an empty window yields no page')
  })

  t.test('a window read in pages yields each event once, even one re-posted later while the read goes on', async (t) => {
    const store = await open(t)
    await store.events.upsert([1, 3, 5, 7, 9].map((n) => stored(n, n)))
    const scan = window(0, 60)
    const seen: number[][] = []
    let moved = false
    // Between the first page and the second, event 1 (already read) moves to the end of the window.
    const readPage = async (after: Parameters<typeof store.views.callbackPage>[1], limit: number) => {
      if (after !== undefined && !moved) {
        moved = true
        await store.events.upsert([stored(1, 30)])
      }
      return store.views.callbackPage(scan, after, limit)
    }
    for await (const page of keysetPages(readPage, (row) => row.position, 2)) seen.push(page.map((row) => row.position.event_no))
    t.ok(moved, 'the event moved mid-read')
    t.strictSame(seen, [[1, 3], [5, 7], [9]], 'event 1 once, as it stood when read; the pages after it go on')
    for await (const page of callbackPages(store, scan, 2)) seen.push(page.map((row) => row.position.event_no))
    t.strictSame(seen.slice(3).flat(), [3, 5, 7, 9, 1], 'a new read finds it where it now is')
  })

  t.test('output texts: every write keeps what the window reads send in step with the stored records', async (t) => {
    const sites = siteModel(['a', 'b'])
    const store = await open(t, sites)
    const [classification, requestA, requestB] = sites.traceKeys as [string, string, string]
    const all = { start: T0, end: T0 + 60 * MINUTE }
    const callbacks = async () => {
      const rows = await store.views.callbackPage(all, undefined, 10)
      return new Map(rows.map((row) => [row.position.event_no, JSON.parse(row.json) as Record<string, unknown>]))
    }
    const traceOf = async (eventNo: number) => (await callbacks()).get(eventNo)?.trace as Record<string, unknown> | undefined
    const expectedTrace = async (eventNo: number) => traceOutput(eventNo, await store.traces.find(eventNo), sites)

    await store.events.upsert([
      stored(1, 1, { dm: 12.25, tsar_classification: null, actions: { want: { b_baseband: true, z_baseband: true }, got: { intensity: true } }, baseband_requested: true }),
      stored(2, 2, { actions: { want: { baseband: true }, got: {} }, baseband_requested: true })
    ])
    const [first] = await store.events.page({ window: all, order: 'asc', limit: 1 })
    t.equal(
      first?.json,
      '{"event_no":1,"timestamp_utc":"2024-05-01T00:01:00.000Z","snr":11,"dm":12.25,"known_source_name":"EXT",' +
        '"tsar_classification":"unclassified","actions":{"want":{"b_baseband":true},"got":{"intensity":true}}}',
      'the event as /v1/events sends it: actions of no configured site left out'
    )
    t.equal(await traceOf(1), undefined, 'no trace yet')

    await store.traces.create(1, 100.5)
    t.strictSame(await traceOf(1), await expectedTrace(1))
    t.match(await traceOf(1), { event_no: 1, [classification]: 'incomplete', update_timestamp: 100.5 })
    await store.traces.setStatus(1, requestB, 'complete', 200.25, 'pipeline')
    t.match(await traceOf(1), { [requestB]: 'complete', [requestA]: 'incomplete', update_timestamp: 200.25 })
    await store.traces.setStatus(1, 'stages/of_no_site', 'complete', 300, 'pipeline')
    t.strictSame(await traceOf(1), await expectedTrace(1), 'a key of no site is not output; the write time is')
    t.equal((await traceOf(1))?.update_timestamp, 300)
    await store.traces.setStatus(2, classification, 'complete', 400, 'tsar')
    t.strictSame(await traceOf(2), await expectedTrace(2), 'a trace made by its first update')
    t.equal((await traceOf(2))?.[classification], 'complete')
    await store.traces.setStatus(2, requestA, 'not_required', 450, 'pipeline')
    t.strictSame(await traceOf(2), await expectedTrace(2), 'a not_required written through update-trace')
    t.equal((await traceOf(2))?.[requestA], 'complete', 'reads complete, as a stored not_required always has')
    t.equal((await store.traces.find(2))?.[requestA], 'not_required', 'and is stored as written')
    await store.traces.upsert([{ event_no: 2, [requestA]: 'not_required', update_timestamp: 500 }])
    t.strictSame(await traceOf(2), await expectedTrace(2), 'a replaced document')
    t.match(await traceOf(2), { [requestA]: 'complete', [classification]: 'incomplete', update_timestamp: 500 })

    await store.events.upsert([stored(1, 1, { snr: 42, actions: { want: {}, got: {} }, baseband_requested: false })])
    t.match(JSON.parse((await store.events.page({ window: all, order: 'asc', limit: 1 }))[0]!.json), { snr: 42, actions: { want: {}, got: {} } })
    t.strictSame([...(await callbacks()).keys()], [2], 'an event no longer asking for baseband data leaves the scan')
  })

  t.test('traces: create is idempotent, set creates and updates, both keep the document shape', async (t) => {
    // One site: the new document holds the classification and the four stages of site `a`.
    const store = await open(t, siteModel(['a']))
    const [classification, request, ...others] = siteModel(['a']).traceKeys as [string, string, ...string[]]
    const document = (event_no: number, set: Record<string, string>, times: object) => ({
      event_no,
      ...Object.fromEntries([classification, request, ...others].map((key) => [key, set[key] ?? 'incomplete'])),
      ...times
    })
    await store.traces.create(1, 100.5)
    t.strictSame(await store.traces.find(1), document(1, {}, { create_timestamp: 100.5, update_timestamp: 100.5 }))
    await store.traces.setStatus(1, classification, 'complete', 200.25, 'pipeline')
    await store.traces.create(1, 300)
    t.strictSame(await store.traces.find(1), document(1, { [classification]: 'complete' }, { create_timestamp: 100.5, update_timestamp: 200.25 }))
    await store.traces.setStatus(2, request, 'complete', 400, 'pipeline')
    t.strictSame(await store.traces.find(2), document(2, { [request]: 'complete' }, { create_timestamp: 400, update_timestamp: 400 }))
    t.equal(await store.traces.find(3), null)
  })

  t.test('traces: concurrent updates of different keys lose none', async (t) => {
    const store = await open(t)
    const keys = Array.from({ length: 100 }, (_, i) => `stages/s${i}`)
    await Promise.all(keys.map((key, i) => store.traces.setStatus(7, key, 'complete', 1000 + i, 'pipeline')))
    const trace = await store.traces.find(7)
    t.equal(keys.filter((key) => trace?.[key] === 'complete').length, 100)
  })

  t.test('traces: bulk upsert replaces whole documents', async (t) => {
    const store = await open(t)
    t.equal(await store.traces.upsert([{ event_no: 1, 'stages/a': 'complete' }, { event_no: 2 }]), 2)
    await store.traces.upsert([{ event_no: 1, 'stages/b': 'not_required', update_timestamp: 5 }])
    t.strictSame(await store.traces.find(1), { event_no: 1, 'stages/b': 'not_required', update_timestamp: 5 })
  })

  t.test('event parts: datatrail replaced by member, heartbeats by id once, one snapshot', async (t) => {
    const store = await open(t)
    t.strictSame(await store.views.eventParts(1), { event: null, trace: null, datatrail: [], heartbeats: [], heartbeatTotal: 0, heartbeatsUpdated: 0 })
    await store.datatrail.put([
      { event_no: 1, member: 'kko_baseband', value: { registered: false }, update_timestamp: 10 },
      { event_no: 1, member: 'baseband', value: { registered: true }, update_timestamp: 11 },
      { event_no: 2, member: 'baseband', value: { registered: true }, update_timestamp: 12 }
    ])
    await store.datatrail.put([{ event_no: 1, member: 'kko_baseband', value: { registered: true, num_files: 3 }, update_timestamp: 20 }])
    t.equal(await store.heartbeats.add([heartbeat(5), heartbeat(2), heartbeat(9, 2)], 30), 3)
    t.equal(await store.heartbeats.add([heartbeat(5, 1, 999), heartbeat(6)], 40), 1, 'only id 6 is new')
    await store.events.upsert([stored(1, 0)])
    const parts = await store.views.eventParts(1)
    t.strictSame(parts.event, stored(1, 0))
    t.strictSame(
      parts.datatrail.map(({ member, value, update_timestamp }) => [member, value, update_timestamp]).sort(),
      [['baseband', { registered: true }, 11], ['kko_baseband', { registered: true, num_files: 3 }, 20]]
    )
    t.strictSame(parts.heartbeats.map((h) => [h.heartbeat.heartbeat_id, h.heartbeat.received.total_data_files, h.update_timestamp]), [
      [2, 1, 30],
      [5, 1, 30],
      [6, 1, 40]
    ])
    t.equal(parts.heartbeatTotal, 3)
    t.equal(parts.heartbeatsUpdated, 40)
  })

  t.test('heartbeats a part at a time: by id after the one given, with the total and the latest store time of them all', async (t) => {
    const store = await open(t)
    await store.heartbeats.add([heartbeat(9), heartbeat(3), heartbeat(7, 2)], 30)
    await store.heartbeats.add([heartbeat(1), heartbeat(5)], 50)
    await store.heartbeats.add([heartbeat(4)], 40)
    const ids = (part: { heartbeats: { heartbeat: HeartbeatInput }[] }) => part.heartbeats.map((h) => h.heartbeat.heartbeat_id)
    const first = await store.heartbeats.page(1, null, 2)
    t.strictSame(ids(first), [1, 3])
    t.equal(first.total, 5, 'the event’s heartbeats, not event 2’s')
    t.equal(first.latestUpdate, 50)
    t.strictSame(ids(await store.heartbeats.page(1, 3, 2)), [4, 5])
    t.strictSame(ids(await store.heartbeats.page(1, 5, 2)), [9])
    t.strictSame(await store.heartbeats.page(1, 9, 2), { heartbeats: [], total: 5, latestUpdate: 50 })
    t.strictSame(await store.heartbeats.page(3, null, 2), { heartbeats: [], total: 0, latestUpdate: 0 })

    const capped = await store.views.eventParts(1, { heartbeatLimit: 2 })
    t.strictSame(ids(capped), [1, 3], 'event parts hold the first few')
    t.equal(capped.heartbeatTotal, 5)
    t.equal(capped.heartbeatsUpdated, 50, 'and know when the latest of all was stored')
  })
}
