import t, { type Test } from 'tap'
import type { HeartbeatInput } from '../../schemas/heartbeats.js'
import { openSqliteStore } from '../../src/store/sqlite/store.js'
import { basebandEvent as event, FIXTURE_EVENT_TIME } from './fixtures/baseband-event.js'
import { storeBesideOtherProgram } from './fixtures/store-beside-other.js'
import { CLASSIFICATION_KEY, stageKey } from '../../src/vocabulary.js'
import { defaultSites as sites } from '../sites.js'

// Finding 10 of issue 27: a write the service did not make marks its event, in the writer's own transaction.

const T0 = FIXTURE_EVENT_TIME


const heartbeat = (event_no: number, heartbeat_id: number): HeartbeatInput =>
  ({
    event_no,
    heartbeat_id,
    site: 'chime',
    sent: { trigger_time: '2026-03-01T00:00:05Z', error: null },
    received: { total_data_files: 1, dir_size_gb: 1, finished_time: '2026-03-01T01:00:00Z', heartbeat_sent_unix_s: 1 }
  })

/** The service's store and a plain connection to the same file: another program, or an older version of the service. */
const storeAndOther = (t: Test) => storeBesideOtherProgram(t, { now: () => T0 })

/** Every kind of write the service makes, through the port, about events 1 to 3. */
async function serviceWrites(store: ReturnType<typeof storeAndOther>['store']) {
  await store.events.upsert([event(1), event(2)])
  await store.traces.create(3, T0 / 1000)
  await store.traces.setStatus(1, stageKey('baseband_callback_request', 'chime'), 'complete', T0 / 1000, 'w')
  await store.traces.setStatus(1, stageKey('baseband_callback_request', 'chime'), 'complete', T0 / 1000 + 1, 'w')
  await store.traces.upsert([{ event_no: 2, [CLASSIFICATION_KEY]: 'complete' }])
  await store.traces.record([{ event_no: 2, key: CLASSIFICATION_KEY, from: null, to: 'complete', at: T0 / 1000, by: 'load' }])
  await store.datatrail.put([{ event_no: 1, member: 'baseband', value: { registered: true, num_files: 2 }, update_timestamp: 1 }])
  await store.heartbeats.add([heartbeat(1, 10), heartbeat(3, 11)], T0 / 1000)
  await store.heartbeats.add([heartbeat(1, 10)], T0 / 1000)
}

t.test("the service's own writes, of every kind, leave no mark", async (t) => {
  const { store, other } = storeAndOther(t)
  await serviceWrites(store)
  t.strictSame(await store.audits.marked(100), { eventNos: [], upTo: 0 })
  t.equal(other.prepare<[], number>('SELECT COUNT(*) FROM audit_marks').pluck().get(), 0, 'the table is empty')
})

t.test("another program's writes to each record table mark their events, in the order written, one mark an event", async (t) => {
  const { store, other } = storeAndOther(t)
  await store.events.upsert([event(1), event(2), event(3), event(4), event(5), event(6)])
  await store.traces.create(2, T0 / 1000)
  await store.heartbeats.add([heartbeat(6, 60)], T0 / 1000)
  other.prepare(`INSERT INTO heartbeats (heartbeat_id, event_no, doc, update_timestamp) VALUES (20, 1, ?, 1)`).run(JSON.stringify(heartbeat(1, 20)))
  other.prepare(`UPDATE traces SET doc = json_set(doc, '$."stages/tsar_classification"', 'complete') WHERE event_no = 2`).run()
  other.prepare(`INSERT INTO datatrail (event_no, member, doc, update_timestamp) VALUES (3, 'baseband', '{"registered": true}', 1)`).run()
  other.prepare(`UPDATE events SET snr = 11 WHERE event_no = 4`).run()
  other.prepare(`INSERT INTO transitions (event_no, key, "from", "to", at, by) VALUES (5, ?, NULL, 'complete', 1, 'old')`).run(CLASSIFICATION_KEY)
  other.prepare(`DELETE FROM heartbeats WHERE heartbeat_id = 60`).run()
  other.prepare(`INSERT INTO events (event_no, timestamp_ms, snr, known_source_name, actions, baseband_requested, update_timestamp) VALUES (7, ?, 1, 'EXT', '{"want":{}}', 0, 1)`).run(T0)
  other.prepare(`UPDATE heartbeats SET doc = json_set(doc, '$.site', 'kko') WHERE heartbeat_id = 20`).run()
  const { eventNos, upTo } = await store.audits.marked(100)
  t.strictSame(eventNos, [2, 3, 4, 5, 6, 7, 1], 'each event once, by its newest mark (event 1 written again last)')
  t.ok(upTo > 0)
  t.strictSame((await store.audits.marked(2)).eventNos, [2, 3], 'at most `limit`, oldest first')
})

t.test("another program's edit of a kept output text marks its event: the marks check holds the texts to the records", async (t) => {
  const { store, other } = storeAndOther(t)
  await store.events.upsert([event(1), event(2), event(3)])
  await store.traces.create(3, T0 / 1000)
  other.prepare(`UPDATE events SET output = 'x' WHERE event_no = 2`).run()
  other.prepare(`UPDATE events SET callback_head = 'x' WHERE event_no = 1`).run()
  other.prepare(`UPDATE traces SET output = 'x' WHERE event_no = 3`).run()
  t.strictSame((await store.audits.marked(100)).eventNos, [2, 1, 3])
  const { columns } = await store.audits.check([1, 2, 3], T0)
  t.strictSame(
    columns.map(({ event_no, column }) => [event_no, column]).sort(),
    [[1, 'events.callback_head'], [2, 'events.output'], [3, 'traces.output']],
    'and the check of the marked events repairs each'
  )
})

t.test("a row another program moves to another event marks both events; one it changes in place marks its own", async (t) => {
  const { store, other } = storeAndOther(t)
  await store.events.upsert([event(1), event(2), event(3)])
  await store.heartbeats.add([heartbeat(1, 10)], T0 / 1000)
  await store.datatrail.put([{ event_no: 1, member: 'baseband', value: { registered: true, num_files: 2 }, update_timestamp: 1 }])
  other.prepare('UPDATE heartbeats SET event_no = 2 WHERE heartbeat_id = 10').run()
  t.strictSame((await store.audits.marked(100)).eventNos, [1, 2], 'the heartbeat left event 1 and reached event 2')
  await store.audits.unmark((await store.audits.marked(100)).upTo)
  other.prepare(`UPDATE datatrail SET event_no = 3 WHERE event_no = 1`).run()
  t.strictSame((await store.audits.marked(100)).eventNos, [1, 3], 'the datatrail member likewise')
  await store.audits.unmark((await store.audits.marked(100)).upTo)
  other.prepare(`UPDATE datatrail SET doc = json_set(doc, '$.num_files', 3) WHERE event_no = 3`).run()
  t.strictSame((await store.audits.marked(100)).eventNos, [3], 'a change in place marks its own event')
})

t.test("unmark forgets the marks read, and keeps one made after the read, also of an event read", async (t) => {
  const { store, other } = storeAndOther(t)
  await store.events.upsert([event(1), event(2)])
  const setSnr = other.prepare<[number]>('UPDATE events SET snr = snr + 1 WHERE event_no = ?')
  setSnr.run(1)
  setSnr.run(2)
  const read = await store.audits.marked(100)
  t.strictSame(read.eventNos, [1, 2])
  setSnr.run(2)
  other.prepare(`INSERT INTO traces (event_no, doc) VALUES (8, '{}')`).run()
  await store.audits.unmark(read.upTo)
  t.strictSame((await store.audits.marked(100)).eventNos, [2, 8], 'the event written again after the read is still marked, and the new one')
  await store.audits.unmark((await store.audits.marked(100)).upTo)
  t.strictSame(await store.audits.marked(100), { eventNos: [], upTo: 0 })
})

t.test("the service's write of an event another program marked leaves that mark", async (t) => {
  const { store, other } = storeAndOther(t)
  await store.events.upsert([event(1)])
  other.prepare(`INSERT INTO heartbeats (heartbeat_id, event_no, doc, update_timestamp) VALUES (30, 1, ?, 1)`).run(JSON.stringify(heartbeat(1, 30)))
  await serviceWrites(store)
  t.strictSame((await store.audits.marked(100)).eventNos, [1], 'the other write is still to be looked at')
})

t.test('a store opened again (another instance, or a reopen) drops its own marks too', async (t) => {
  const { store, path } = storeAndOther(t)
  const second = openSqliteStore(path, sites, { now: () => T0 })
  t.teardown(() => second.close())
  await serviceWrites(second)
  t.strictSame(await store.audits.marked(100), { eventNos: [], upTo: 0 })
})
