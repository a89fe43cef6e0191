import type { Test } from 'tap'
import type { EventRecord } from '../../src/domain/records.js'
import { keysetPages } from '../../src/store/pages.js'
import type { Store } from '../../src/store/port.js'
import type { OpenStore } from './conformance.js'

const T0 = Date.parse('2024-05-01T00:00:00Z')
const MINUTE = 60_000
const CLASSIFICATION = 'stages/tsar_classification'
const KKO_CONVERSION = 'stages/baseband_conversion/sites/kko'

const event = (event_no: number, minutes: number, baseband = true): EventRecord => ({
  event_no,
  timestamp: T0 + minutes * MINUTE,
  snr: 10,
  dm: null,
  known_source_name: 'EXT',
  tsar_classification: null,
  actions: { want: baseband ? { baseband: true, kko_baseband: true } : { intensity: true }, got: {} },
  baseband_requested: baseband,
  update_timestamp: 1
})

const window = (fromMinutes: number, toMinutes: number) => ({ start: T0 + fromMinutes * MINUTE, end: T0 + toMinutes * MINUTE })

const windowPages = (store: Store, scan: ReturnType<typeof window>, pageSize: number) =>
  keysetPages((after, limit) => store.views.windowPage(scan, after, limit), (row) => row.event, pageSize)

/** Transition history, the window reads of the audit and the transition feed: the audit issue's half of the suite. */
export function historyConformance(t: Test, open: OpenStore) {
  t.test('history: a change records its transition, from null on a new trace; no change records nothing', async (t) => {
    const store = await open(t)
    t.equal(await store.traces.setStatus(1, KKO_CONVERSION, 'complete', 100.5, 'pipeline'), true, 'a new trace: a change')
    t.equal(await store.traces.setStatus(1, KKO_CONVERSION, 'complete', 101, 'pipeline'), false, 'the same value again: none')
    t.equal(await store.traces.setStatus(1, CLASSIFICATION, 'incomplete', 102, 'tsar'), false, 'incomplete already: none')
    t.equal(await store.traces.setStatus(1, KKO_CONVERSION, 'incomplete', 103.25, 'operator'), true)
    await store.traces.create(1, 104)
    await store.traces.create(2, 104)
    t.strictSame(await store.traces.history(1), [
      { key: KKO_CONVERSION, from: null, to: 'complete', at: 100.5, by: 'pipeline' },
      { key: KKO_CONVERSION, from: 'complete', to: 'incomplete', at: 103.25, by: 'operator' }
    ])
    t.strictSame(await store.traces.history(2), [], 'create-trace records nothing')
    t.strictSame(await store.traces.history(3), [], 'an unknown event has none')
    t.match(await store.traces.find(1), { [KKO_CONVERSION]: 'incomplete', update_timestamp: 103.25 }, 'the change itself is stored')
  })

  t.test('history: a stored not_required or a key missing from the document is the `from`', async (t) => {
    const store = await open(t)
    await store.traces.upsert([{ event_no: 5, [KKO_CONVERSION]: 'not_required', update_timestamp: 1 }])
    t.equal(await store.traces.setStatus(5, KKO_CONVERSION, 'complete', 10, 'pipeline'), true, 'not_required is another value')
    t.equal(await store.traces.setStatus(5, CLASSIFICATION, 'complete', 11, 'pipeline'), true)
    t.strictSame(await store.traces.history(5), [
      { key: KKO_CONVERSION, from: 'not_required', to: 'complete', at: 10, by: 'pipeline' },
      { key: CLASSIFICATION, from: null, to: 'complete', at: 11, by: 'pipeline' }
    ])
  })

  t.test('history: a not_required written through update-trace is kept as written, in the trace and its history', async (t) => {
    const store = await open(t)
    t.equal(await store.traces.setStatus(6, KKO_CONVERSION, 'not_required', 10, 'pipeline'), true)
    t.equal(await store.traces.setStatus(6, KKO_CONVERSION, 'not_required', 11, 'pipeline'), false, 'the same value again: none')
    t.equal(await store.traces.setStatus(6, KKO_CONVERSION, 'complete', 12, 'operator'), true, 'complete is another value')
    t.strictSame(await store.traces.history(6), [
      { key: KKO_CONVERSION, from: null, to: 'not_required', at: 10, by: 'pipeline' },
      { key: KKO_CONVERSION, from: 'not_required', to: 'complete', at: 12, by: 'operator' }
    ])
  })

  t.test('history: transitions recorded elsewhere join the history of traces that exist, changing no trace', async (t) => {
    const store = await open(t)
    await store.traces.upsert([{ event_no: 11, [KKO_CONVERSION]: 'complete', update_timestamp: 7 }])
    const recorded = await store.traces.record([
      { event_no: 11, key: KKO_CONVERSION, from: 'incomplete', to: 'complete', at: 5, by: 'pipeline' },
      { event_no: 12, key: KKO_CONVERSION, from: 'incomplete', to: 'complete', at: 6, by: 'pipeline' },
      { event_no: 11, key: CLASSIFICATION, from: 'incomplete', to: 'complete', at: 4, by: 'tsar' }
    ])
    t.equal(recorded, 2, 'event 12 has no trace')
    t.strictSame(await store.traces.history(11), [
      { key: CLASSIFICATION, from: 'incomplete', to: 'complete', at: 4, by: 'tsar' },
      { key: KKO_CONVERSION, from: 'incomplete', to: 'complete', at: 5, by: 'pipeline' }
    ])
    t.strictSame(await store.traces.history(12), [])
    t.strictSame(await store.traces.find(11), { event_no: 11, [KKO_CONVERSION]: 'complete', update_timestamp: 7 }, 'the trace is as it was')
    t.equal(await store.traces.record([]), 0)
  })

  t.test('history: oldest first by `at`, then in the order written', async (t) => {
    const store = await open(t)
    await store.traces.setStatus(7, 'stages/a', 'complete', 50, 'w')
    await store.traces.setStatus(7, 'stages/b', 'complete', 40, 'w')
    await store.traces.setStatus(7, 'stages/c', 'complete', 50, 'w')
    t.strictSame((await store.traces.history(7)).map((transition) => transition.key), ['stages/b', 'stages/a', 'stages/c'])
  })

  t.test('history: 200 concurrent updates of different keys lose no change and record each exactly once', async (t) => {
    const store = await open(t)
    const keys = Array.from({ length: 200 }, (_, i) => `stages/s${i}`)
    const changed = await Promise.all(keys.map((key, i) => store.traces.setStatus(9, key, 'complete', 1000 + i, 'pipeline')))
    t.equal(changed.filter(Boolean).length, 200)
    const trace = await store.traces.find(9)
    t.equal(keys.filter((key) => trace?.[key] === 'complete').length, 200, 'every change is stored')
    const history = await store.traces.history(9)
    t.equal(history.length, 200, 'exactly one transition per change')
    t.strictSame(new Set(history.map((transition) => transition.key)), new Set(keys))
    t.ok(history.every((transition) => transition.from === null && transition.to === 'complete'))
  })

  t.test('window pages: requested events in order, each with its trace and what its facts are made from, never its whole history', async (t) => {
    const store = await open(t)
    await store.events.upsert([event(3, 10), event(1, 5), event(2, 5), event(4, 20, false), event(5, 60)])
    await store.traces.setStatus(1, KKO_CONVERSION, 'complete', 10, 'pipeline')
    await store.traces.setStatus(1, CLASSIFICATION, 'complete', 11, 'tsar')
    await store.traces.setStatus(1, KKO_CONVERSION, 'incomplete', 13, 'operator')
    await store.traces.setStatus(1, KKO_CONVERSION, 'complete', 14, 'pipeline')
    await store.traces.setStatus(3, CLASSIFICATION, 'complete', 12, 'tsar')
    await store.datatrail.put([
      { event_no: 1, member: 'kko_baseband', value: { registered: true }, update_timestamp: 20 },
      { event_no: 1, member: 'baseband', value: { registered: false }, update_timestamp: 21 },
      { event_no: 3, member: 'baseband', value: { registered: true }, update_timestamp: 22 }
    ])
    const heartbeat = (heartbeat_id: number, event_no: number, finished: boolean, error: string | null = null) => ({
      event_no,
      heartbeat_id,
      site: 'kko',
      sent: { trigger_time: '2024-05-01T00:00:05Z', error },
      received: { total_data_files: 3, dir_size_gb: 1, finished_time: finished ? '2024-05-01T01:00:00Z' : null, heartbeat_sent_unix_s: 1 }
    })
    await store.heartbeats.add([heartbeat(31, 3, true), heartbeat(13, 1, false), heartbeat(12, 1, true), heartbeat(11, 1, false, 'disk full'), heartbeat(10, 1, true)], 30)

    const pages = []
    for await (const page of windowPages(store, window(0, 60), 2)) pages.push(page)
    t.strictSame(pages.map((page) => page.map((row) => row.event.event_no)), [[1, 2], [3]], 'time, then event_no; 4 asks no baseband, 5 is at the end')
    const [one, two, three] = pages.flat()
    t.strictSame(one?.event, event(1, 5), 'the whole event record')
    t.match(one?.trace, { event_no: 1, [KKO_CONVERSION]: 'complete', [CLASSIFICATION]: 'complete' })
    t.strictSame(one?.datatrail.map((item) => [item.member, item.value]).sort(), [['baseband', { registered: false }], ['kko_baseband', { registered: true }]])
    t.strictSame(
      one?.heartbeats.map((item) => item.heartbeat.heartbeat_id),
      [11, 12],
      'of the site, the newest reporting an error and the newest finished, by heartbeat_id: not the others'
    )
    t.strictSame(
      one?.transitions.map((item) => [item.key, item.to, item.at]).sort(),
      [[KKO_CONVERSION, 'complete', 10], [CLASSIFICATION, 'complete', 11]],
      'of each key its first completion: not the rest of its history'
    )
    t.strictSame([two?.trace, two?.datatrail, two?.heartbeats, two?.transitions], [null, [], [], []], 'an event with nothing else stored')
    t.strictSame(three?.heartbeats.map((item) => item.heartbeat.heartbeat_id), [31])
    let none = 0
    for await (const _ of windowPages(store, window(100, 200), 2)) none++
    t.equal(none, 0, 'an empty window yields no page')
  })

  t.test('the transition feed: every transition after a position, in the order written, with its event', async (t) => {
    const store = await open(t)
    await store.traces.setStatus(1, CLASSIFICATION, 'complete', 5, 'before')
    const start = await store.transitions.position()
    t.strictSame(await store.transitions.since(start, 10), { transitions: [], position: start }, 'nothing new yet')

    await store.traces.setStatus(2, KKO_CONVERSION, 'complete', 10, 'pipeline')
    await store.traces.setStatus(2, KKO_CONVERSION, 'complete', 11, 'pipeline')
    await store.traces.setStatus(1, CLASSIFICATION, 'incomplete', 12, 'operator')
    await store.traces.setStatus(3, CLASSIFICATION, 'complete', 9, 'tsar')
    const first = await store.transitions.since(start, 2)
    t.strictSame(first.transitions, [
      { event_no: 2, key: KKO_CONVERSION, from: null, to: 'complete', at: 10, by: 'pipeline' },
      { event_no: 1, key: CLASSIFICATION, from: 'complete', to: 'incomplete', at: 12, by: 'operator' }
    ], 'at most `limit`, in the order written; the unchanged update is not there')
    t.ok(first.position > start, 'the position moves forward')
    const rest = await store.transitions.since(first.position, 10)
    t.strictSame(rest.transitions, [{ event_no: 3, key: CLASSIFICATION, from: null, to: 'complete', at: 9, by: 'tsar' }], 'written later, though its `at` is earlier')
    t.strictSame(await store.transitions.since(rest.position, 10), { transitions: [], position: rest.position })
    t.ok((await store.transitions.position()) >= rest.position)
  })
}
