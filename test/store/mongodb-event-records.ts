import t from 'tap'
import type { Document } from 'mongodb'
import type { HeartbeatInput } from '../../schemas/heartbeats.js'
import { factsOf } from '../../src/domain/audit/kept-facts.js'
import { AuditRecords } from '../../src/store/mongodb/audit-records.js'
import { COLLECTIONS, HEARTBEAT_KINDS, INDEXES } from '../../src/store/mongodb/indexes.js'
import { defaultSites as sites } from '../sites.js'
import { engineOnly } from './mongo-backends.js'

// Finding 9 of issue 27 on MongoDB: an event's facts are made from a bounded number of heartbeat documents.

const T0 = Date.parse('2026-03-01T00:00:00Z')
const EVENT = 290137

const heartbeat = (id: number, site: string, finished: boolean, error: string | null): HeartbeatInput =>
  ({
    event_no: EVENT,
    heartbeat_id: id,
    site,
    sent: { trigger_time: '2026-03-01T00:00:05Z', error },
    received: { total_data_files: id % 7, dir_size_gb: 1, finished_time: finished ? '2026-03-01T01:00:00Z' : null, heartbeat_sent_unix_s: id }
  })

t.test('an event with 2,000 heartbeats: its records are read from at most two heartbeat documents a site, and make the facts all of them make', async (t) => {
  const { store, engine } = await engineOnly.open(t, sites)
  await store.events.upsert([
    { event_no: EVENT, timestamp: T0, snr: 12, dm: null, known_source_name: 'EXT', tsar_classification: null, actions: { want: { baseband: true, kko_baseband: true }, got: {} }, baseband_requested: true, update_timestamp: 1 }
  ])
  const all: HeartbeatInput[] = []
  for (let id = 0; id < 2000; id++) {
    all.push(heartbeat(id, sites.names[id % sites.names.length]!, id % 3 === 0 && id < 1700, id % 397 === 0 ? `disk ${id}` : id % 5 === 0 ? '' : null))
  }
  for (let start = 0; start < all.length; start += 500) await store.heartbeats.add(all.slice(start, start + 500), T0 / 1000)

  // Every document the heartbeats' cursors hand back while the records are read.
  const heartbeats = engine!.collection(COLLECTIONS.heartbeats)
  const find = heartbeats.find.bind(heartbeats)
  const returned: Document[] = []
  heartbeats.find = (filter, options) => {
    const cursor = find(filter, options)
    return { toArray: async () => cursor.toArray().then((documents) => (returned.push(...documents), documents)) }
  }
  const records = (await new AuditRecords(engine!.db, sites).of([EVENT])).get(EVENT)!
  heartbeats.find = find

  t.ok(returned.length <= 2 * sites.names.length, `at most two heartbeat documents a site leave the store (${returned.length})`)
  t.ok(records.heartbeats.length <= 2 * sites.names.length)
  const everything = { ...records, heartbeats: all.map((item) => ({ heartbeat: item })) }
  t.strictSame(factsOf(EVENT, records, sites), factsOf(EVENT, everything, sites), 'the facts of all the heartbeats')
  t.strictSame((await store.audits.find(EVENT))?.facts, factsOf(EVENT, everything, sites), 'and the kept facts')
})

t.test('each heartbeat query of the facts is the filter of a partial index, with the index equality fields and sort', async (t) => {
  const byName = new Map(INDEXES.heartbeats.map((index) => [index.name, index]))
  for (const [kind, filter] of Object.entries(HEARTBEAT_KINDS)) {
    const index = byName.get(`heartbeats_${kind}`)
    t.strictSame(index?.partialFilterExpression, filter, `${kind}: the index holds only the heartbeats the query asks for`)
    t.strictSame(Object.keys(index?.key ?? {}).sort(), ['event_no', 'heartbeat_id', 'site'], `${kind}: equality on event_no and site, then heartbeat_id in order`)
  }
})
