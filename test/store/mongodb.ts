import { MongoServerError } from 'mongodb'
import t from 'tap'
import { MongoStore } from '../../src/store/mongodb/store.js'
import { StoreMissingError, StoreUnavailableError } from '../../src/store/port.js'
import { defaultSites } from '../sites.js'
import { storeConformance, type OpenStore } from './conformance.js'
import { duplicateKeyError, MingoEngine } from './mingo/engine.js'
import { engineOnly, mongoBackends } from './mongo-backends.js'
import { historyConformance } from './history-conformance.js'
import { historyPartsConformance } from './history-parts.js'
import { tracerConformance } from './tracer-conformance.js'
import { auditConformance } from './audit-conformance.js'
import { keptAuditChecks } from './kept-audit-checks.js'
import { openAuditedOn } from './mongodb-audits.js'

for (const backend of mongoBackends()) {
  t.test(`MongoStore on ${backend.name}`, async (t) => {
    const open: OpenStore = async (t, sites) => (await backend.open(t, sites)).store

    t.test('passes the store conformance suite', async (t) => {
      storeConformance(t, open)
      tracerConformance(t, open)
      historyConformance(t, open)
      historyPartsConformance(t, open)
      auditConformance(t, openAuditedOn(backend), defaultSites)
      keptAuditChecks(t, openAuditedOn(backend), defaultSites)
    })

    t.test('start-up creates the unique indexes: a second document of one key is refused', async (t) => {
      const { db } = await backend.open(t)
      const pairs: [string, object][] = [
        ['trace', { event_no: 1 }],
        ['events', { event_no: 1 }],
        ['heartbeats', { heartbeat_id: 1 }],
        ['datatrail', { event_no: 1, member: 'baseband' }],
        ['users', { name: 'ana' }]
      ]
      for (const [collection, key] of pairs) {
        await db.collection(collection).insertOne({ ...key })
        await t.rejects(db.collection(collection).insertOne({ ...key }), { code: 11000 }, collection)
      }
    })

    t.test('a trace written with an _id of its own keeps none of it on the way out', async (t) => {
      const { store } = await backend.open(t)
      await store.traces.upsert([{ event_no: 5, _id: 'from-a-dump', 'stages/a': 'complete' }])
      await store.traces.upsert([{ event_no: 5, _id: 'another', 'stages/a': 'incomplete' }])
      t.strictSame(await store.traces.find(5), { event_no: 5, 'stages/a': 'incomplete' })
    })

    t.test('a closed store rejects with StoreUnavailableError', async (t) => {
      const { store } = await backend.open(t)
      await store.close()
      await t.rejects(store.ping(), StoreUnavailableError)
      await t.rejects(store.users.find('ana'), StoreUnavailableError)
    })
  })
}

t.test('each trace write is one single-document operation, retried once after a racing insert', async (t) => {
  const { store, engine } = await engineOnly.open(t)
  // Two keys of the default sites' new trace.
  const [a, b] = ['stages/tsar_classification', 'stages/baseband_conversion/sites/kko']
  const traceWrites = () => engine!.calls.filter((call) => call.collection === 'trace' && call.method !== 'findOne')

  engine!.calls.length = 0
  await store.traces.setStatus(1, a, 'complete', 10, 'pipeline')
  await store.traces.create(2, 10)
  t.strictSame(traceWrites().map((call) => call.method), ['updateOne', 'updateOne'], 'one updateOne each')

  engine!.calls.length = 0
  engine!.failNext('updateOne', duplicateKeyError('trace', { event_no: 3 }))
  await store.traces.setStatus(3, b, 'complete', 20, 'pipeline')
  t.match(await store.traces.find(3), { [a]: 'incomplete', [b]: 'complete', update_timestamp: 20 })
  engine!.failNext('updateOne', duplicateKeyError('trace', { event_no: 4 }))
  await store.traces.create(4, 30)
  t.match(await store.traces.find(4), { event_no: 4, create_timestamp: 30 })
  t.equal(traceWrites().length, 4, 'each retried exactly once')

  engine!.failNext('updateOne', duplicateKeyError('trace', { event_no: 5 }))
  engine!.failNext('updateOne', duplicateKeyError('trace', { event_no: 5 }))
  await t.rejects(store.traces.setStatus(5, a, 'complete', 40, 'pipeline'), MongoServerError, 'a second E11000 is a real error')
})

t.test('bulk writes are one bulkWrite each', async (t) => {
  const { store, engine } = await engineOnly.open(t)
  engine!.calls.length = 0
  const event = { timestamp: 0, snr: 1, dm: null, known_source_name: 'EXT', tsar_classification: null, actions: { want: {}, got: {} }, baseband_requested: false, update_timestamp: 1 }
  await store.events.upsert([{ ...event, event_no: 1 }, { ...event, event_no: 2 }])
  await store.traces.upsert([{ event_no: 1 }, { event_no: 2 }])
  await store.datatrail.put([1, 2].map((event_no) => ({ event_no, member: 'baseband', value: {}, update_timestamp: 1 })))
  // After each, the kept audit reads the event's records back and writes its own collection (the keeper's `keep`, src/kept-audit/keeper.ts).
  const recordWrites = engine!.calls.filter((call) => call.method === 'bulkWrite' && call.collection !== 'audit')
  t.strictSame(recordWrites.map((call) => [call.collection, call.method]), [
    ['events', 'bulkWrite'],
    ['trace', 'bulkWrite'],
    ['datatrail', 'bulkWrite']
  ])
})

t.test('a command refuses a database that holds none of the store collections, and creates nothing in it', async (t) => {
  const engine = new MingoEngine('frb_mastr')
  await t.rejects(
    MongoStore.open(engine.db, () => engine.close(), defaultSites, 'refuse'),
    new StoreMissingError("The MongoDB database frb_mastr holds none of the store's collections: check MONGODB_DB")
  )
  t.strictSame(await engine.db.listCollections({}, { nameOnly: true }).toArray(), [], 'no collection was created')
  const created = await MongoStore.open(engine.db, async () => {}, defaultSites)
  await created.close()
  const store = await MongoStore.open(engine.db, async () => {}, defaultSites, 'refuse')
  t.teardown(() => store.close())
  t.equal(await store.users.count(), 0, 'a database that holds the store opens')
})

t.test('a command that only reads creates no index (issue 40, point 7); one that writes creates the missing ones', async (t) => {
  const engine = new MingoEngine()
  const created = await MongoStore.open(engine.db, async () => {}, defaultSites)
  await created.close()
  engine.calls.length = 0
  const reader = await MongoStore.open(engine.db, async () => {}, defaultSites, 'refuse', { configuration: 'read', access: 'read-only' })
  t.equal(await reader.users.count(), 0)
  await reader.close()
  t.strictSame(engine.calls.filter((call) => call.method === 'createIndexes'), [], 'no index was created by the reader')
  const writer = await MongoStore.open(engine.db, async () => {}, defaultSites, 'refuse', { configuration: 'write' })
  await writer.close()
  t.ok(engine.calls.some((call) => call.method === 'createIndexes'), 'a command that writes creates them')
})
