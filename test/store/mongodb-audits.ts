import type { Db } from 'mongodb'
import t, { type Test } from 'tap'
import { eventually } from './eventually.js'
import type { HeartbeatInput } from '../../schemas/heartbeats.js'
import { factsOf } from '../../src/domain/audit/kept-facts.js'
import { lookAt } from '../../src/domain/audit/kept-look.js'
import { reportOf } from '../../src/domain/audit/kept-report.js'
import type { EventRecord } from '../../src/domain/records.js'
import { DEFAULT_STAGE_DEADLINES, parseStageDeadlines, type StageDeadlines } from '../../src/domain/stage-deadlines.js'
import { AUDIT_SETTINGS_ID } from '../../src/store/mongodb/kept-documents.js'
import { signatureOf } from '../../src/store/mongodb/store-configuration.js'
import { MongoStore, type MongoAuditOptions } from '../../src/store/mongodb/store.js'
import type { KeptAudit } from '../../src/kept-audit/keeper.js'
import { StoreUnavailableError, type Store } from '../../src/store/port.js'
import { siteModel, type Sites } from '../../src/vocabulary.js'
import { defaultSites } from '../sites.js'
import { MingoEngine } from './mingo/engine.js'
import type { OpenTamperableStore, Tamper } from './kept-audit-checks.js'
import { engineOnly, mongoBackends, type MongoBackend } from './mongo-backends.js'

const T0 = Date.parse('2026-03-01T12:00:00Z')
const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DEADLINES = parseStageDeadlines(DEFAULT_STAGE_DEADLINES)
const TSAR = 'stages/tsar_classification'
const CONVERSION_KKO = 'stages/baseband_conversion/sites/kko'

/** The store's clock, moved by the test. */
const clockAt = (now: number) => ({ now })
type Clock = ReturnType<typeof clockAt>

interface Opened {
  store: Store
  clock: Clock
}

/** A store on `db` with its own clock (and the options given), closed when the test ends. */
async function storeOn(t: Test, db: Db, options: MongoAuditOptions & { sites?: Sites; clock?: Clock } = {}): Promise<Opened> {
  const { sites = defaultSites, clock = clockAt(T0 + 10 * MINUTE), ...rest } = options
  const store = await MongoStore.open(db, async () => {}, sites, 'create', { deadlines: DEADLINES, now: () => clock.now, ...rest })
  t.teardown(() => store.close())
  return { store, clock }
}

/**
 * The audit conformance suite's store on a backend (test/store/mongodb.ts runs the suite): opened
 * with the suite's deadlines and clock, and its verdict feed read at once, as a server's live stream
 * does at start. A MongoDB feed's positions are each instance's own and begin where it is first
 * read: the suite reads the feed from position 0.
 */
export const openAuditedOn =
  (backend: MongoBackend): OpenTamperableStore =>
  async (t, { sites, deadlines, now }) => {
    const { db } = await backend.open(t, sites)
    const open = async (given: StageDeadlines) => {
      const store = await MongoStore.open(db, async () => {}, sites, 'create', { deadlines: given, now })
      t.teardown(() => store.close())
      return store
    }
    let store = await open(deadlines)
    return {
      store,
      tamper: mongoTamper(db),
      async reopen(next) {
        await store.close()
        store = await open(next)
        return store
      }
    }
  }

/** Writes into the audit collection as another program would, past the store. */
function mongoTamper(db: Db): Tamper {
  const set = async (eventNo: number, fields: Record<string, unknown>) => void (await db.collection('audit').updateOne({ event_no: eventNo }, { $set: fields }))
  return {
    serveComplete: (eventNo) => set(eventNo, { verdict: 'complete', 'report.contradictions': [], 'report.pending': [], 'report.complete': true }),
    breakFacts: (eventNo) => set(eventNo, { facts: 'not facts' }),
    breakReport: (eventNo) => set(eventNo, { report: { nothing: 'of a report' } }),
    // The record collections hold the records alone: the output texts are made as they are read.
    keptColumns: []
  }
}

const event = (event_no: number, overrides: Partial<EventRecord> = {}): EventRecord => ({
  event_no,
  timestamp: T0,
  snr: 12.5,
  dm: 100,
  known_source_name: 'B0329+54',
  tsar_classification: null,
  actions: { want: { baseband: true, kko_baseband: true }, got: {} },
  baseband_requested: true,
  update_timestamp: T0 / 1000,
  ...overrides
})

const heartbeat = (event_no: number, heartbeat_id: number, site: string, error: string | null = null): HeartbeatInput => ({
  event_no,
  heartbeat_id,
  site,
  sent: { trigger_time: '2026-03-01T12:00:05Z', error },
  received: { total_data_files: 10, dir_size_gb: 1.5, finished_time: '2026-03-01T13:00:00Z', heartbeat_sent_unix_s: T0 / 1000 + 3600 }
})

/** What the kept audit of an event must be: made from its records as the port reads them, looked at `now`; none outside the audit. */
async function expected(store: Store, eventNo: number, now: number, sites: Sites = defaultSites): Promise<KeptAudit | null> {
  const parts = await store.views.eventParts(eventNo)
  const transitions = await store.traces.history(eventNo)
  const facts = factsOf(eventNo, { ...parts, transitions }, sites)
  if (facts.event?.listed !== true) return null
  return JSON.parse(JSON.stringify({ facts, look: lookAt(facts, { sites, deadlines: DEADLINES, now }).look })) as KeptAudit
}

async function keptAsRecords(t: Test, { store, clock }: Opened, eventNo: number, what: string) {
  t.strictSame(await store.audits.find(eventNo), await expected(store, eventNo, clock.now), what)
}

for (const backend of mongoBackends()) {
  t.test(`the kept audit on ${backend.name}`, async (t) => {
    t.test('every write path keeps each event’s audit equal to what its records make', async (t) => {
      const { db } = await backend.open(t)
      const opened = await storeOn(t, db)
      const { store } = opened
      t.equal(await store.audits.find(1), null, 'nothing stored, nothing kept')

      await store.traces.create(1, T0 / 1000)
      await keptAsRecords(t, opened, 1, 'traces.create')
      t.equal(await store.audits.find(1), null, 'no event yet: not in the audit')

      await store.events.upsert([event(1)])
      await keptAsRecords(t, opened, 1, 'events.upsert')
      t.equal((await store.audits.find(1))?.look.verdict, 'in_progress')

      await store.traces.setStatus(1, TSAR, 'complete', T0 / 1000 + 60, 'pipeline')
      await keptAsRecords(t, opened, 1, 'traces.setStatus')
      t.strictSame((await store.audits.find(1))?.facts.first_completions, { [TSAR]: T0 / 1000 + 60 })

      await store.traces.record([{ event_no: 1, key: TSAR, from: null, to: 'complete', at: T0 / 1000 + 30, by: 'import' }])
      await keptAsRecords(t, opened, 1, 'traces.record')
      t.strictSame((await store.audits.find(1))?.facts.first_completions, { [TSAR]: T0 / 1000 + 30 }, 'the earliest')

      await store.datatrail.put([{ event_no: 1, member: 'baseband', value: { registered: true, num_files: 10, missing_files: ['a'] }, update_timestamp: 1 }])
      await keptAsRecords(t, opened, 1, 'datatrail.put')

      await store.heartbeats.add([heartbeat(1, 7, 'kko', 'disk full'), heartbeat(1, 8, 'chime')], T0 / 1000)
      await keptAsRecords(t, opened, 1, 'heartbeats.add')
      t.strictSame((await store.audits.find(1))?.facts.sites.kko?.last_error, { heartbeat_id: 7, error: 'disk full' })

      await store.traces.upsert([{ event_no: 1, [TSAR]: 'complete', [CONVERSION_KKO]: 'failed' }])
      await keptAsRecords(t, opened, 1, 'traces.upsert')

      await store.events.upsert([event(1, { actions: { want: {}, got: {} }, baseband_requested: false })])
      await keptAsRecords(t, opened, 1, 'an event that no longer asks for baseband data')
      t.equal(await store.audits.find(1), null, 'out of the audit')

      await store.heartbeats.add([heartbeat(2, 9, 'gbo')], T0 / 1000)
      await keptAsRecords(t, opened, 2, 'a heartbeat before its event')
      await store.traces.record([{ event_no: 3, key: TSAR, from: null, to: 'complete', at: 1, by: 'import' }])
      t.equal(await store.audits.find(3), null, 'a transition of no trace stores nothing, and keeps nothing')
    })

    t.test('writes through two instances at once converge on what the records make', async (t) => {
      const { db } = await backend.open(t)
      const a = await storeOn(t, db)
      const b = await storeOn(t, db, { clock: a.clock })
      await Promise.all([
        a.store.events.upsert([event(4)]),
        b.store.traces.setStatus(4, TSAR, 'complete', T0 / 1000 + 1, 'pipeline'),
        a.store.traces.setStatus(4, CONVERSION_KKO, 'complete', T0 / 1000 + 2, 'pipeline'),
        b.store.datatrail.put([{ event_no: 4, member: 'kko_baseband', value: { registered: true, num_files: 3, missing_files: [] }, update_timestamp: 1 }]),
        a.store.heartbeats.add([heartbeat(4, 11, 'kko')], T0 / 1000),
        b.store.heartbeats.add([heartbeat(4, 12, 'chime')], T0 / 1000)
      ])
      await keptAsRecords(t, a, 4, 'after the race')
    })

    t.test('windowPage and due read the kept audits by index', async (t) => {
      const { db } = await backend.open(t)
      const { store, clock } = await storeOn(t, db)
      await store.events.upsert([
        event(10, { timestamp: T0 }),
        event(11, { timestamp: T0 }),
        event(12, { timestamp: T0 + MINUTE }),
        event(13, { timestamp: T0 + 2 * MINUTE, actions: { want: {}, got: {} }, baseband_requested: false }),
        event(14, { timestamp: T0 + HOUR })
      ])
      const window = { start: T0, end: T0 + HOUR }
      const page = async (after?: { timestamp: number; event_no: number }, limit = 10) =>
        (await store.audits.windowPage(window, after, limit)).map((report) => report.event_no)
      t.strictSame(await page(), [10, 11, 12], 'listed only, end excluded, by (event time, event_no)')
      t.strictSame(await page(undefined, 2), [10, 11])
      t.strictSame(await page({ timestamp: T0, event_no: 11 }), [12], 'strictly after the position')
      t.strictSame((await store.audits.windowPage(window, undefined, 1))[0], reportOf((await expected(store, 10, clock.now))!.facts, defaultSites))

      // The clock stands at T0 + 10 min: each event's next deadline is its baseband callback request's (15 min).
      t.strictSame(await store.audits.due(T0 + 14 * MINUTE, 10), [], 'no deadline has passed')
      t.strictSame((await store.audits.due(T0 + 15 * MINUTE, 10)).sort(), [10, 11], 'at or before now')
      const due = await store.audits.due(T0 + 16 * MINUTE, 10)
      t.strictSame([due.slice(0, 2).sort(), due.slice(2)], [[10, 11], [12]], 'earliest first')
      const all = await store.audits.due(T0 + 100 * HOUR, 10)
      t.strictSame([...all].sort(), [10, 11, 12, 14], 'an event not audited has nothing due')
      t.equal((await store.audits.due(T0 + 100 * HOUR, 2)).length, 2, 'at most limit')
    })

    t.test('settle writes the look a passed deadline changed, once, and the verdict feed delivers it', async (t) => {
      const { db, engine } = await backend.open(t)
      const a = await storeOn(t, db)
      const b = await storeOn(t, db, { clock: a.clock })
      // Positions are each instance's own: each feed is opened before the writes.
      const starts = [await a.store.verdictChanges.position(), await b.store.verdictChanges.position()]
      await a.store.events.upsert([event(20)])
      const created = await a.store.verdictChanges.since(starts[0]!, 10)
      t.match(created.items, [{ event_no: 20, from: null, to: 'in_progress', became_stuck: [], audit: { event_no: 20, verdict: 'in_progress' } }])

      const later = T0 + 2 * HOUR
      t.strictSame(await a.store.audits.due(later, 10), [20])
      if (engine !== undefined) engine.calls.length = 0
      const [fromA, fromB] = await Promise.all([a.store.audits.settle([20], later), b.store.audits.settle([20], later)])
      const settled = [...fromA, ...fromB]
      t.equal(settled.length, 1, 'of two instances settling one event, one records the change')
      if (engine !== undefined) {
        const writes = engine.calls.filter((call) => call.collection === 'audit' && call.method === 'updateOne')
        t.equal(writes.length, 2, 'both read the old look and wrote; the second write found the revision moved')
      }
      t.match(settled[0], { event_no: 20, from: 'in_progress', to: 'stuck', at: new Date(later).toISOString() })
      t.match(settled[0]?.became_stuck, [{ site: null, stage: 'tsar_classification', deadline_utc: new Date(T0 + HOUR).toISOString() }])
      t.strictSame((await a.store.audits.find(20))?.look, lookAt((await a.store.audits.find(20))!.facts, { sites: defaultSites, deadlines: DEADLINES, now: later }).look)
      t.strictSame(await a.store.audits.settle([20, 999], later), [], 'settled already; an event of which nothing is kept')

      for (const [i, store] of [a.store, b.store].entries()) {
        const { items: changes } = await store.verdictChanges.since(starts[i]!, 10)
        t.strictSame(changes, [...created.items, ...settled], 'every instance’s feed has each change exactly once')
      }
    })

    t.test('verify finds the kept audits that differ from their records and repairs them', async (t) => {
      const { db } = await backend.open(t)
      const { store, clock } = await storeOn(t, db)
      await store.events.upsert([event(30), event(31), event(33)])
      const right = await store.audits.find(31)
      const wrong = { ...right!.facts, classification: 'complete' }
      await db.collection('audit').updateOne({ event_no: 31 }, { $set: { facts: wrong } })
      // A heartbeat written straight into the collection, by a program no store follows here.
      await db.collection('heartbeats').insertOne({ ...heartbeat(32, 40, 'kko'), update_timestamp: 1 })

      const first = await store.audits.verify(0, 2, clock.now)
      t.strictSame(first, { checked: 2, mismatches: [{ event_no: 31, parts: ['facts'], kept: wrong, recomputed: right!.facts }], unreadable: [], columns: [], last: 31 })
      const rest = await store.audits.verify(31, 10, clock.now)
      t.equal(rest.checked, 2)
      t.equal(rest.last, null, 'the end')
      t.match(rest.mismatches, [{ event_no: 32, kept: null, recomputed: { event_no: 32, event: null } }])
      t.strictSame(await store.audits.verify(0, 10, clock.now), { checked: 4, mismatches: [], unreadable: [], columns: [], last: null }, 'all repaired')
      await keptAsRecords(t, { store, clock }, 31, 'repaired')
      await keptAsRecords(t, { store, clock }, 32, 'built')
    })

    t.test('a store that follows the collections keeps the audit of writes other programs make straight into them', async (t) => {
      const { db } = await backend.open(t)
      const logs: string[] = []
      const opened = await storeOn(t, db, { watch: true, log: (message) => logs.push(message) })
      const { store } = opened
      const { event_no, timestamp, ...rest } = event(50)
      await db.collection('events').insertOne({ event_no, timestamp: new Date(timestamp), ...rest })
      await eventually(() => store.audits.find(50), (kept) => kept !== null, 'the event inserted by another program')
      await keptAsRecords(t, opened, 50, 'an insert')

      // update-trace as the pipeline writes it: a $set naming the document by _id only.
      await db.collection('trace').insertOne({ event_no: 50 })
      await db.collection('trace').updateOne({ event_no: 50 }, { $set: { [TSAR]: 'complete' } })
      await eventually(() => store.audits.find(50), (kept) => kept?.facts.classification === 'complete', 'the trace updated by another program')
      await keptAsRecords(t, opened, 50, 'an update')

      await db.collection('datatrail').insertOne({ event_no: 50, member: 'baseband', value: { registered: true, num_files: 2 }, update_timestamp: 1 })
      await eventually(() => store.audits.find(50), (kept) => kept?.facts.sites.chime?.member.registered === true, 'the datatrail member')
      await keptAsRecords(t, opened, 50, 'a datatrail member')
      t.strictSame(logs, [], 'nothing went wrong')
    })
  })
}

t.test('a watcher that fails says so once, retries, says when it works again, and misses nothing', async (t) => {
  const { db, engine } = await engineOnly.open(t)
  const logs: string[] = []
  const { store } = await storeOn(t, db, { watch: true, log: (message) => logs.push(message) })
  await store.events.upsert([event(60)])
  engine!.away = true
  await eventually(async () => logs.length, (count) => count > 0, 'the failure logged')
  engine!.away = false
  await db.collection('heartbeats').insertOne({ ...heartbeat(60, 61, 'kko'), update_timestamp: 1 })
  await eventually(() => store.audits.find(60), (kept) => kept?.facts.sites.kko?.last_finished != null, 'the heartbeat written while the watcher waited to retry')
  t.equal(logs.length, 2)
  t.match(logs[0], /^Kept audits: following the writes of other programs failed \(MongoNetworkError: .*\); retrying until it works$/)
  t.equal(logs[1], 'Kept audits: following the writes of other programs again')
})

t.test('a write whose audit keeps losing to other writers rejects with StoreUnavailableError', async (t) => {
  const { db, engine } = await engineOnly.open(t)
  const { store } = await storeOn(t, db)
  await store.events.upsert([event(70)])
  // Before each of this write's compare-and-sets, another writer moves the revision.
  for (let rev = 100; rev < 110; rev++) {
    engine!.beforeNext('updateOne', () => void engine!.collection('audit').updateOne({ event_no: 70 }, { $set: { rev } }))
  }
  await t.rejects(store.heartbeats.add([heartbeat(70, 71, 'kko')], 1), StoreUnavailableError)
  await store.heartbeats.add([heartbeat(70, 71, 'kko')], 1)
  t.equal((await store.audits.find(70))?.facts.sites.kko?.last_finished?.heartbeat_id, 71, 'the write again brings it up to date')
})

t.test('the kept audit follows the configuration: built at the first start, made again when sites or deadlines change', async (t) => {
  const engine = new MingoEngine()
  const { event_no, timestamp, ...rest } = event(80)
  await engine.db.collection('events').insertOne({ event_no, timestamp: new Date(timestamp), ...rest })
  await engine.db.collection('trace').insertOne({ event_no: 81, [TSAR]: 'complete' })
  await engine.db.collection('heartbeats').insertOne(heartbeat(80, 1, 'gbo'))

  const first = await storeOn(t, engine.db)
  t.ok('gbo' in (await first.store.audits.find(80))!.facts.sites, 'a heartbeat at gbo is known of gbo')
  await keptAsRecords(t, first, 80, 'an event stored before the first start')
  await keptAsRecords(t, first, 81, 'a trace stored before the first start')
  const start = await first.store.verdictChanges.position()

  const hurried = { ...DEADLINES, tsar_classification: 5 * MINUTE } as StageDeadlines
  const store = await MongoStore.open(engine.db, async () => {}, defaultSites, 'create', { deadlines: hurried, now: () => first.clock.now })
  t.teardown(() => store.close())
  t.equal((await store.audits.find(80))?.look.verdict, 'stuck', 'looked at again with the new deadlines')
  t.match((await first.store.verdictChanges.since(start, 10)).items, [{ event_no: 80, from: 'in_progress', to: 'stuck' }], 'with its change')

  const fewer = siteModel(['chime', 'kko'])
  const renamed = await storeOn(t, engine.db, { sites: fewer })
  t.notOk('gbo' in (await renamed.store.audits.find(80))!.facts.sites, 'facts made again for the sites: gbo is none of them now')
  t.strictSame(await renamed.store.audits.find(80), await expected(renamed.store, 80, renamed.clock.now, fewer))
})

t.test('a rebuild stopped half way goes on after the last page it recorded, and leaves no mark once done', async (t) => {
  const engine = new MingoEngine()
  const built = await storeOn(t, engine.db)
  await built.store.events.upsert([1, 2, 3, 4, 5].map((eventNo) => event(eventNo)))
  await built.store.heartbeats.add([1, 2, 3, 4, 5].map((eventNo) => heartbeat(eventNo, 10 * eventNo, 'gbo')), 1)
  t.ok('gbo' in (await built.store.audits.find(1))!.facts.sites, 'a heartbeat at gbo is known of gbo')
  await built.store.close()
  const fewer = siteModel(['chime', 'kko'])
  // What a start with two sites leaves when killed after its page up to event 3 (that page itself is not done here: the mark is all it reads).
  await engine.db
    .collection<{ _id: string }>('audit')
    .updateOne({ _id: AUDIT_SETTINGS_ID }, { $set: { rebuild: { ...signatureOf({ sites: fewer, deadlines: DEADLINES }), from: 'records', after: 3 } } })

  const notes: string[] = []
  const resumed = await storeOn(t, engine.db, { sites: fewer, notify: (line) => notes.push(line) })
  t.match(notes, [/configuration changed/, /going on after event 3, where a start before this one stopped/, /^The kept audit was made again \(from the records\)/])
  for (const eventNo of [1, 2, 3]) t.ok('gbo' in (await resumed.store.audits.find(eventNo))!.facts.sites, `event ${eventNo}, before the mark, is not made again`)
  for (const eventNo of [4, 5]) t.strictSame(await resumed.store.audits.find(eventNo), await expected(resumed.store, eventNo, resumed.clock.now, fewer), `event ${eventNo}, after it, is`)
  const settings = await engine.db.collection<{ _id: string; rebuild?: unknown; facts_signature?: string }>('audit').findOne({ _id: AUDIT_SETTINGS_ID })
  t.equal(settings?.rebuild ?? null, null, 'the mark is gone once the audit is made')
  t.equal(settings?.facts_signature, signatureOf({ sites: fewer, deadlines: DEADLINES }).facts_signature)
})
