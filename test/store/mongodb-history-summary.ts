import { isDeepStrictEqual } from 'node:util'
import type { Db, Document } from 'mongodb'
import fc from 'fast-check'
import t, { type Test } from 'tap'
import { factsOf } from '../../src/domain/audit/kept-facts.js'
import type { EventRecord, FeedTransition } from '../../src/domain/records.js'
import { AuditRecords } from '../../src/store/mongodb/audit-records.js'
import { SUMMARY_FIELD, summaryOf } from '../../src/store/mongodb/history-summary.js'
import { COLLECTIONS } from '../../src/store/mongodb/indexes.js'
import { MongoStore } from '../../src/store/mongodb/store.js'
import type { Store } from '../../src/store/port.js'
import { CLASSIFICATION_KEY, STAGES, stageKey } from '../../src/vocabulary.js'
import { defaultSites as sites } from '../sites.js'
import { eventually } from './eventually.js'
import type { MingoEngine } from './mingo/engine.js'
import { engineOnly, mongoBackends } from './mongo-backends.js'

// Issue 27 on MongoDB: an event's facts read the summary of its trace's history, never the history.

const T0 = Date.parse('2026-03-01T00:00:00Z')
const AT = T0 / 1000
const KEYS = [CLASSIFICATION_KEY, ...sites.names.flatMap((site) => STAGES.map((stage) => stageKey(stage, site)))]
const KKO_CONVERSION = stageKey('baseband_conversion', 'kko')

const event = (event_no: number): EventRecord => ({
  event_no,
  timestamp: T0,
  snr: 12,
  dm: null,
  known_source_name: 'EXT',
  tsar_classification: null,
  actions: { want: { baseband: true, kko_baseband: true }, got: {} },
  baseband_requested: true,
  update_timestamp: 1
})

const transition = (event_no: number, n: number, to: 'complete' | 'incomplete', at: number): FeedTransition => ({
  event_no,
  key: KEYS[n % KEYS.length]!,
  from: null,
  to,
  at,
  by: 'pipeline'
})

/** The facts the whole of an event's records make, read through the port: the reference. */
async function factsOfAll(store: Store, eventNo: number) {
  const parts = await store.views.eventParts(eventNo)
  return JSON.parse(JSON.stringify(factsOf(eventNo, { ...parts, transitions: await store.traces.history(eventNo) }, sites))) as unknown
}

/** Every trace document the engine's cursors hand back while `work` runs, and the projections asked for. */
async function traceReads(engine: MingoEngine, work: () => Promise<unknown>) {
  const traces = engine.collection(COLLECTIONS.trace)
  const { find, findOne } = { find: traces.find.bind(traces), findOne: traces.findOne.bind(traces) }
  const documents: Document[] = []
  const projections: unknown[] = []
  traces.find = (filter, options) => {
    projections.push(options?.projection)
    const cursor = find(filter, options)
    return { toArray: async () => cursor.toArray().then((found) => (documents.push(...found), found)) }
  }
  traces.findOne = async (filter, options) => {
    projections.push(options?.projection)
    const found = await findOne(filter, options)
    if (found !== null) documents.push(found)
    return found
  }
  try {
    await work()
  } finally {
    traces.find = find
    traces.findOne = findOne
  }
  return { documents, projections, bytes: documents.reduce((sum, document) => sum + JSON.stringify(document).length, 0) }
}

t.test('an event with 6,000 transitions: its facts are made from the summary of its history, never the history, and are those the whole history makes', async (t) => {
  const { store, engine } = await engineOnly.open(t, sites)
  const EVENT = 7
  await store.events.upsert([event(EVENT)])
  await store.traces.create(EVENT, AT)
  // Imported in batches, completions at times going down and up, so the first of each key is deep inside; then update-trace on top.
  for (let start = 0; start < 6000; start += 1000) {
    const batch = Array.from({ length: 1000 }, (_, i) => start + i).map((n) => transition(EVENT, n, n % 3 === 0 ? 'complete' : 'incomplete', AT + ((n * 7919) % 6000)))
    await store.traces.record(batch)
  }
  await store.traces.setStatus(EVENT, KKO_CONVERSION, 'complete', AT + 9000, 'operator')
  const stored = await engine!.db.collection(COLLECTIONS.trace).findOne({ event_no: EVENT })
  t.equal(stored?.transitions.length, 6001, 'the history is all in the document')

  const reads = await traceReads(engine!, () => new AuditRecords(engine!.db, sites).of([EVENT]))
  const records = (await new AuditRecords(engine!.db, sites).of([EVENT])).get(EVENT)!
  t.ok(reads.documents.length > 0, 'the trace is read')
  t.ok(
    reads.documents.every((document) => (document.transitions?.length ?? 0) <= 1),
    'of its history, at most the last element leaves the store'
  )
  t.ok(
    reads.projections.every((projection) => (projection as Document | undefined)?.transitions?.$slice === -1),
    'every read of the trace asks for the last element of the history alone'
  )
  t.ok(reads.bytes < 4_000, `${reads.bytes} bytes of the trace read, of ${JSON.stringify(stored).length} stored`)
  t.ok(records.transitions.length <= KEYS.length, `${records.transitions.length} transitions made into facts: a key's first completion each`)
  const reference = await factsOfAll(store, EVENT)
  t.strictSame(factsOf(EVENT, records, sites), reference, 'the facts of the whole history')
  t.strictSame((await store.audits.find(EVENT))?.facts, reference, 'and the kept facts')
  t.strictSame(stored?.[SUMMARY_FIELD], summaryOf(stored?.transitions), 'the summary is what the whole history makes')

  const verifying = await traceReads(engine!, () => store.audits.verify(0, 10, T0))
  t.ok(verifying.documents.every((document) => (document.transitions?.length ?? 0) <= 1), 'a check of the kept audit reads no more of it')
})

/** A trace written as another program, or a release before summaries, would: a history and no summary beside it. */
const writtenBefore = (db: Db, eventNo: number, history: FeedTransition[], fields: Document = {}) =>
  db.collection(COLLECTIONS.trace).insertOne({ event_no: eventNo, ...fields, transitions: history })

/** A transition pushed onto a history past the store, as another program would, leaving the summary as it was. */
const pushPast = (db: Db, eventNo: number, item: FeedTransition) =>
  db.collection(COLLECTIONS.trace).updateOne({ event_no: eventNo }, { $push: { transitions: item } } as Document)

for (const backend of mongoBackends()) {
  t.test(`a history without its summary, or changed without it, never makes the facts wrong (${backend.name})`, async (t) => {
    t.test('a trace written before summaries: the first fact read uses the whole history and makes the summary; the next reads the summary', async (t) => {
      const { store, db, engine } = await backend.open(t, sites)
      const history = Array.from({ length: 300 }, (_, n) => transition(20, n, n % 4 === 1 ? 'complete' : 'incomplete', AT + 600 - n))
      await store.events.upsert([event(20)])
      await writtenBefore(db, 20, history)
      t.equal((await db.collection(COLLECTIONS.trace).findOne({ event_no: 20 }))?.[SUMMARY_FIELD], undefined, 'no summary yet')

      const first = await store.audits.verify(0, 10, T0)
      t.strictSame(first.mismatches.map((mismatch) => mismatch.event_no), [20], 'the kept facts made before the trace are found to differ')
      t.ok(first.mismatches[0]?.parts.includes('facts'))
      t.strictSame((await store.audits.find(20))?.facts, await factsOfAll(store, 20), 'and are made from the whole history')
      const stored = await db.collection(COLLECTIONS.trace).findOne({ event_no: 20 })
      t.strictSame(stored?.[SUMMARY_FIELD], summaryOf(stored?.transitions), 'the summary is made, beside the history')
      if (engine !== undefined) {
        const again = await traceReads(engine, () => store.audits.verify(0, 10, T0))
        t.ok(again.documents.every((document) => (document.transitions?.length ?? 0) <= 1), 'the next check reads the summary only')
      }
      t.strictSame((await store.audits.verify(0, 10, T0)).mismatches, [], 'and finds nothing')
    })

    t.test('another program pushes onto a history, or replaces the trace with one, and no watcher follows: the check makes the facts from the history', async (t) => {
      const { store, db } = await backend.open(t, sites)
      await store.events.upsert([event(30), event(31)])
      await store.traces.setStatus(30, KKO_CONVERSION, 'complete', AT + 500, 'pipeline')
      await store.traces.setStatus(31, KKO_CONVERSION, 'complete', AT + 500, 'pipeline')
      // An earlier completion of the same key, pushed past the store; a replacement that brings another history.
      await pushPast(db, 30, { ...transition(30, 0, 'complete', AT + 100), key: KKO_CONVERSION })
      await db.collection(COLLECTIONS.trace).deleteOne({ event_no: 31 })
      await writtenBefore(db, 31, [{ ...transition(31, 0, 'complete', AT + 50), key: KKO_CONVERSION }])

      const checked = await store.audits.verify(0, 10, T0)
      t.strictSame(checked.mismatches.map((mismatch) => mismatch.event_no).sort(), [30, 31], 'both found')
      for (const eventNo of [30, 31]) {
        t.strictSame((await store.audits.find(eventNo))?.facts, await factsOfAll(store, eventNo), `event ${eventNo}: the facts of the history as it is`)
      }
      t.equal((await store.audits.find(30))?.facts.first_completions[KKO_CONVERSION], AT + 100, 'the earlier completion counts')

      // The service's own write onto a history out of step keeps it so, and the facts right.
      await pushPast(db, 30, { ...transition(30, 0, 'complete', AT + 10), key: CLASSIFICATION_KEY })
      await store.traces.setStatus(30, KKO_CONVERSION, 'incomplete', AT + 600, 'operator')
      t.strictSame((await store.audits.find(30))?.facts, await factsOfAll(store, 30), 'a write after another program’s')
      t.equal((await store.audits.find(30))?.facts.first_completions[CLASSIFICATION_KEY], AT + 10)
    })

    t.test('another program rewrites a history keeping its last element: the watcher marks the summary out of step, and the facts follow', async (t) => {
      const { db } = await backend.open(t, sites)
      const store = await MongoStore.open(db, async () => {}, sites, 'create', { watch: true, now: () => T0 })
      t.teardown(() => store.close())
      await store.events.upsert([event(40)])
      await store.traces.create(40, AT)
      await store.traces.setStatus(40, KKO_CONVERSION, 'complete', AT + 100, 'pipeline')
      await store.traces.setStatus(40, CLASSIFICATION_KEY, 'complete', AT + 200, 'pipeline')
      t.equal((await store.audits.find(40))?.facts.first_completions[KKO_CONVERSION], AT + 100)
      // The first completion taken out of the history ($pull-like), the last transition left where it was.
      const history = ((await db.collection(COLLECTIONS.trace).findOne({ event_no: 40 }))?.transitions ?? []) as Document[]
      await db.collection(COLLECTIONS.trace).updateOne({ event_no: 40 }, { $set: { transitions: history.slice(1) } })
      const kept = await eventually(
        () => store.audits.find(40),
        (found) => found?.facts.first_completions[KKO_CONVERSION] === undefined,
        'the completion taken out of the history'
      )
      t.strictSame(kept?.facts, await factsOfAll(store, 40), 'the facts of the history as it is')
      // Made again from the whole history while those facts were made.
      const stored = await db.collection(COLLECTIONS.trace).findOne({ event_no: 40 })
      t.strictSame(stored?.[SUMMARY_FIELD], summaryOf(stored?.transitions), 'and its summary')
    })
  })
}

t.test('two instances push onto one history at once: every transition is recorded, and the summary ends as the whole history’s', async (t: Test) => {
  const { store, engine } = await engineOnly.open(t, sites)
  const other = await MongoStore.open(engine!.db, async () => {}, sites)
  t.teardown(() => other.close())
  await store.events.upsert([event(50)])
  await store.traces.create(50, AT)
  const keys = KEYS.slice(0, 6)
  await Promise.all(keys.map((key, i) => (i % 2 === 0 ? store : other).traces.setStatus(50, key, 'complete', AT + 10 * (i + 1), 'pipeline')))
  const stored = await engine!.db.collection(COLLECTIONS.trace).findOne({ event_no: 50 })
  t.equal(stored?.transitions.length, keys.length, 'every transition recorded')
  t.strictSame(stored?.[SUMMARY_FIELD], summaryOf(stored?.transitions), 'the summary is that of the whole history')
  t.strictSame((await store.audits.find(50))?.facts, await factsOfAll(store, 50))
})

t.test('another program pushes between the read of a status write and its write: the summary is not carried past it', async (t) => {
  const { store, db, engine } = await engineOnly.open(t, sites)
  await store.events.upsert([event(60)])
  await store.traces.setStatus(60, CLASSIFICATION_KEY, 'complete', AT + 300, 'pipeline')
  // The write reads the key and the summary in step, then this lands before it writes.
  engine!.beforeNext('updateOne', () => void pushPast(db, 60, { ...transition(60, 0, 'complete', AT + 20), key: KKO_CONVERSION }))
  await store.traces.setStatus(60, CLASSIFICATION_KEY, 'incomplete', AT + 400, 'operator')
  const stored = await db.collection(COLLECTIONS.trace).findOne({ event_no: 60 })
  t.equal(stored?.transitions.length, 3, 'both pushes landed')
  t.strictSame(stored?.[SUMMARY_FIELD], summaryOf(stored?.transitions), 'the summary is that of the whole history')
  t.equal((await store.audits.find(60))?.facts.first_completions[KKO_CONVERSION], AT + 20, 'the other program’s completion counts')
  t.strictSame((await store.audits.find(60))?.facts, await factsOfAll(store, 60))
})

type HistoryWrite =
  | { kind: 'status'; eventNo: number; key: number; to: 'complete' | 'incomplete' }
  | { kind: 'import'; eventNo: number; key: number; to: 'complete' | 'incomplete'; earlier: number }
  | { kind: 'replace'; eventNo: number; withHistory: boolean }
  | { kind: 'foreign-push'; eventNo: number; key: number; earlier: number }
  | { kind: 'foreign-replace'; eventNo: number; key: number; earlier: number }

const historyWrites = () => {
  const eventNo = fc.constantFrom(1, 2)
  const key = fc.integer({ min: 0, max: 5 })
  const to = fc.constantFrom('complete' as const, 'incomplete' as const)
  const earlier = fc.integer({ min: 0, max: 100 })
  return fc.oneof(
    fc.record({ kind: fc.constant('status' as const), eventNo, key, to }),
    fc.record({ kind: fc.constant('import' as const), eventNo, key, to, earlier }),
    fc.record({ kind: fc.constant('replace' as const), eventNo, withHistory: fc.boolean() }),
    fc.record({ kind: fc.constant('foreign-push' as const), eventNo, key, earlier }),
    fc.record({ kind: fc.constant('foreign-replace' as const), eventNo, key, earlier })
  )
}

t.test('whatever mix of the service’s and other programs’ history writes, a check leaves each event’s facts those of its whole history, and each summary in step that of it', async (t) => {
  await fc.assert(
    fc.asyncProperty(fc.array(historyWrites(), { minLength: 1, maxLength: 25 }), async (writes: HistoryWrite[]) => {
      const { store, db } = await engineOnly.open(t, sites)
      await store.events.upsert([event(1), event(2)])
      let at = AT
      for (const write of writes) {
        at += 10
        const key = KEYS['key' in write ? write.key : 0]!
        const past = (earlier: number) => ({ event_no: write.eventNo, key, from: null, to: 'complete' as const, at: at - earlier * 10, by: 'other' })
        switch (write.kind) {
          case 'status':
            await store.traces.setStatus(write.eventNo, key, write.to, at, 'service')
            break
          case 'import':
            await store.traces.record([{ event_no: write.eventNo, key, from: null, to: write.to, at: at - write.earlier * 10, by: 'import' }])
            break
          case 'replace': {
            const history = write.withHistory ? [past(3), { ...past(1), to: 'incomplete' as const }] : undefined
            await store.traces.upsert([{ event_no: write.eventNo, ...(history === undefined ? {} : { transitions: history }) }])
            break
          }
          case 'foreign-push':
            await pushPast(db, write.eventNo, past(write.earlier))
            break
          case 'foreign-replace': {
            const stored = await db.collection(COLLECTIONS.trace).findOne({ event_no: write.eventNo }, { projection: { _id: 0, [SUMMARY_FIELD]: 0 } })
            await db.collection(COLLECTIONS.trace).deleteOne({ event_no: write.eventNo })
            const history = [...((stored?.transitions ?? []) as Document[]), past(write.earlier)]
            await writtenBefore(db, write.eventNo, history as FeedTransition[], { ...stored, transitions: undefined })
            break
          }
        }
      }
      await store.audits.verify(0, 10, T0)
      for (const eventNo of [1, 2]) {
        const reference = await factsOfAll(store, eventNo)
        // Facts compare as the verifier compares them (keptDifferences): the order of their keys is none of their content.
        if (!isDeepStrictEqual((await store.audits.find(eventNo))?.facts, reference)) return false
        const stored = await db.collection(COLLECTIONS.trace).findOne({ event_no: eventNo })
        const summary: unknown = stored?.[SUMMARY_FIELD]
        if (summary !== undefined && summary !== null && !isDeepStrictEqual(summary, summaryOf(stored?.transitions))) return false
      }
      return true
    }),
    { numRuns: 50 }
  )
})
