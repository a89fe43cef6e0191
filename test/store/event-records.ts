import fc from 'fast-check'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import type { HeartbeatInput } from '../../schemas/heartbeats.js'
import { factsOf } from '../../src/domain/audit/kept-facts.js'
import type { FeedTransition } from '../../src/domain/records.js'
import { openKeptDatabase } from '../../src/store/sqlite/native-lifetimes.js'
import { BOUNDED_READS, EventRecordsReader, completionOf } from '../../src/store/sqlite/event-records.js'
import { migrations } from '../../src/store/sqlite/migrations.js'
import { openSqliteStore } from '../../src/store/sqlite/store.js'
import { CLASSIFICATION_KEY, STAGES, stageKey } from '../../src/vocabulary.js'
import { defaultSites as sites } from '../sites.js'

// Finding 9 of issue 27: the facts of an event are made from a bounded read of its records, never all of them.

const T0 = Date.parse('2026-03-01T00:00:00Z')
const EVENT = 290137
/** The migrations of 53fdc3f, the release before the bounded read: a store it wrote has applied these. */
const MIGRATIONS_OF_53FDC3F = 8

const heartbeat = (id: number, site: string, finished: boolean, error: string | null, files = id % 7): HeartbeatInput =>
  ({
    event_no: EVENT,
    heartbeat_id: id,
    site,
    sent: { trigger_time: '2026-03-01T00:00:05Z', error },
    received: { total_data_files: files, dir_size_gb: 1, finished_time: finished ? '2026-03-01T01:00:00Z' : null, heartbeat_sent_unix_s: id }
  })

/** A reader on its own connection to the store's file, as the store's own reader sees it. */
function readerOf(t: Test, path: string) {
  const db = openKeptDatabase(path)
  t.teardown(() => db.close())
  return { db, reader: new EventRecordsReader(db, sites) }
}

t.test('an event with 11,000 heartbeats and 10,000 transitions: its facts are made from a few records, the same facts as from all', async (t) => {
  const path = join(t.testdir(), 'tracer.sqlite')
  const store = openSqliteStore(path, sites, { now: () => T0 })
  t.teardown(() => store.close())
  await store.events.upsert([
    { event_no: EVENT, timestamp: T0, snr: 12, dm: null, known_source_name: 'EXT', tsar_classification: null, actions: { want: { baseband: true, kko_baseband: true }, got: {} }, baseband_requested: true, update_timestamp: 1 }
  ])
  await store.traces.create(EVENT, T0 / 1000)
  // Every heartbeat id lands on a site in turn; some are finished, a few report an error, so the newest of each kind is deep inside.
  for (let start = 0; start < 11_000; start += 1000) {
    const batch: HeartbeatInput[] = []
    for (let id = start; id < start + 1000; id++) {
      const site = sites.names[id % sites.names.length]!
      batch.push(heartbeat(id, site, id % 3 === 0 && id < 9000, id % 997 === 0 ? `disk ${id}` : id % 5 === 0 ? '' : null))
    }
    await store.heartbeats.add(batch, T0 / 1000)
  }
  const keys = [CLASSIFICATION_KEY, ...sites.names.flatMap((site) => STAGES.map((stage) => stageKey(stage, site)))]
  const transitions: FeedTransition[] = []
  for (let n = 0; n < 10_000; n++) {
    const key = keys[n % keys.length]!
    transitions.push({ event_no: EVENT, key, from: null, to: n % 2 === 0 ? 'incomplete' : 'complete', at: T0 / 1000 + 10_000 - n, by: 'pipeline' })
  }
  await store.traces.record(transitions)

  const { reader } = readerOf(t, path)
  const bounded = reader.of([EVENT]).get(EVENT)!
  const everything = reader.everythingOf([EVENT]).get(EVENT)!
  t.equal(everything.heartbeats.length, 11_000, 'the event has all its heartbeats')
  t.equal(everything.transitions.length, 10_000, 'and all its transitions')
  t.ok(bounded.heartbeats.length <= 2 * sites.names.length, `at most two heartbeats a site are read (${bounded.heartbeats.length})`)
  t.ok(bounded.transitions.length <= keys.length, `at most one transition an audited key is read (${bounded.transitions.length})`)
  t.ok(bounded.datatrail.length <= sites.names.length, 'at most one datatrail member a site')
  const facts = factsOf(EVENT, bounded, sites)
  t.strictSame(facts, factsOf(EVENT, everything, sites), 'the facts of the bounded read are those of the full read')
  t.strictSame((await store.audits.find(EVENT))?.facts, facts, 'and those kept')
  t.ok(Object.values(facts.sites).some((site) => site.last_error !== null && site.last_finished !== null), 'the facts hold finished and erring heartbeats')
})

t.test('each statement of the bounded read searches an index: none scans the heartbeats, transitions or datatrail', async (t) => {
  const path = join(t.testdir(), 'tracer.sqlite')
  await openSqliteStore(path, sites).close()
  const { db } = readerOf(t, path)
  const parameters = { events: '[1]', sites: '["chime"]', keys: '{"0":"stages/tsar_classification"}', limit: 10 }
  for (const [name, sql] of Object.entries(BOUNDED_READS)) {
    const explain = db.prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`)
    const named = Object.fromEntries(Object.entries(parameters).filter(([parameter]) => sql.includes(`@${parameter}`)))
    const plan = (Object.keys(named).length > 0 ? explain.all(named) : explain.all(...sql.split('?').slice(1).map(() => '[1]'))).map((row) => row.detail)
    const tables = plan.filter((detail) => /\b(events|traces|datatrail|heartbeats|transitions)\b/.test(detail))
    t.ok(tables.length > 0, `${name}: reads a record table`)
    t.strictSame(
      tables.filter((detail) => !detail.startsWith('SEARCH ')),
      [],
      `${name}: every read of a record table is a search (${tables.join('; ')})`
    )
  }
  const plan = (sql: string, ...args: unknown[]) => db.prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`).all(...args).map((row) => row.detail).join('; ')
  t.match(plan(BOUNDED_READS.heartbeats, { events: '[1]', sites: '["chime"]' }), /heartbeats_finished.*heartbeats_erring/, 'the newest finished and erring heartbeats by their partial indexes')
  t.match(plan(BOUNDED_READS.firstCompletions, { events: '[1]', keys: '{"0":"stages/tsar_classification"}' }), /transitions_first_completions/, 'the first completion by its partial index')
})

t.test('the completion SQLite writes of a transition is the one the bounded read looks for, for every key of a stage and no other', async (t) => {
  const path = join(t.testdir(), 'tracer.sqlite')
  const store = openSqliteStore(path, sites)
  t.teardown(() => store.close())
  const { db } = readerOf(t, path)
  const odd = ['North-1', 'kkö', 'a/b', '']
  const keys = [CLASSIFICATION_KEY, ...[...sites.names, ...odd].flatMap((site) => STAGES.map((stage) => stageKey(stage, site)))]
  const others = ['stages/tsar_classification/sites/chime', 'stages/baseband_conversion', 'stages/baseband_conversion/site/kko', 'Stages/baseband_conversion/sites/kko', 'chime', '']
  // As another program writes them, straight into the table: the column is generated whoever writes.
  const insert = db.prepare('INSERT INTO transitions (event_no, key, "from", "to", at, by) VALUES (1, ?, NULL, ?, 1, ?)')
  for (const key of [...keys, ...others]) for (const to of ['complete', 'incomplete']) insert.run(key, to, 'hand')
  const written = db.prepare<[], { key: string; to: string; completion: string | null }>('SELECT key, "to", completion FROM transitions ORDER BY seq').all()
  t.equal(written.length, 2 * (keys.length + others.length))
  for (const { key, to, completion } of written) {
    t.equal(completion, to === 'complete' ? completionOf(key) : null, `${JSON.stringify(key)} to ${to}`)
  }
  t.strictSame(others.map(completionOf), others.map(() => null), 'a key of no stage has none')
  t.equal(new Set(keys.map(completionOf)).size, keys.length, 'no two keys of a stage share one')
})

/** A heartbeat document as another program might write it: any of these shapes, which heartbeatOutput reads as best it can. */
const mostly = <T>(common: readonly T[], rare: readonly T[]) =>
  fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...common) }, { weight: 1, arbitrary: fc.constantFrom(...rare) })
const oddHeartbeat = fc.record({
  site: mostly<unknown>(['chime', 'kko'], ['gbo', 'elsewhere', 5, null, ['chime']]),
  error: mostly<unknown>([null, '', 'disk full'], [undefined, false, 0, { code: 1 }, ['x']]),
  finished: mostly<unknown>([null, '2026-03-01T01:00:00Z'], [undefined, '', 17]),
  sent: mostly(['object'], ['array', 'text']),
  received: mostly(['object'], ['array', 'absent']),
  files: fc.integer({ min: 0, max: 4 })
})

type OddHeartbeat = typeof oddHeartbeat extends fc.Arbitrary<infer T> ? T : never

function oddDocument(id: number, odd: OddHeartbeat): string {
  const sent = odd.sent === 'object' ? { trigger_time: 'x', ...(odd.error === undefined ? {} : { error: odd.error }) } : odd.sent === 'array' ? [{ error: odd.error ?? 'x' }] : 'sent'
  const receivedObject = { total_data_files: odd.files, ...(odd.finished === undefined ? {} : { finished_time: odd.finished }) }
  const received = odd.received === 'object' ? receivedObject : odd.received === 'array' ? [receivedObject] : undefined
  return JSON.stringify({ heartbeat_id: id, event_no: EVENT, site: odd.site, sent, ...(received === undefined ? {} : { received }) })
}

t.test('a batch of events, some with more completions than the scan reads an event: each one’s first completions are those of its whole history', async (t) => {
  const keys = [CLASSIFICATION_KEY, ...sites.names.flatMap((site) => STAGES.map((stage) => stageKey(stage, site))), 'stages/x/sites/chime', stageKey('baseband_conversion', 'elsewhere')]
  const transition = fc.record({ key: fc.constantFrom(...keys), to: fc.constantFrom('complete', 'incomplete'), at: fc.integer({ min: 0, max: 50 }) })
  const history = fc.oneof(fc.array(transition, { maxLength: 8 }), fc.array(transition, { minLength: 60, maxLength: 200 }))
  const path = join(t.testdir(), 'tracer.sqlite')
  const store = openSqliteStore(path, sites)
  t.teardown(() => store.close())
  const { db, reader } = readerOf(t, path)
  const add = db.prepare(`INSERT INTO transitions (event_no, key, "from", "to", at, by) VALUES (?, ?, NULL, ?, ?, 'other')`)
  let base = 0
  fc.assert(
    fc.property(fc.array(history, { minLength: 1, maxLength: 6 }), fc.boolean(), (histories, reversed) => {
      base += 10
      const eventNos = histories.map((_, index) => base + index)
      db.transaction(() => histories.forEach((events, index) => events.forEach(({ key, to, at }) => add.run(base + index, key, to, at))))()
      const asked = reversed ? [...eventNos].reverse() : eventNos
      const bounded = reader.of(asked)
      const everything = reader.everythingOf(asked)
      for (const eventNo of eventNos) {
        t.strictSame(factsOf(eventNo, bounded.get(eventNo)!, sites).first_completions, factsOf(eventNo, everything.get(eventNo)!, sites).first_completions, `event ${eventNo}`)
      }
    }),
    { numRuns: 60 }
  )
})

t.test('on a store 53fdc3f wrote, with records another program wrote in any shape, the bounded read makes the facts the full read does', async (t) => {
  const transition = fc.record({ key: fc.constantFrom(CLASSIFICATION_KEY, stageKey('baseband_conversion', 'chime'), stageKey('data_registration', 'kko'), 'stages/x/sites/chime'), to: fc.constantFrom('complete', 'incomplete'), at: fc.integer({ min: 0, max: 20 }) })
  let run = 0
  await fc.assert(
    fc.asyncProperty(fc.array(oddHeartbeat, { maxLength: 40 }), fc.array(transition, { maxLength: 30 }), async (heartbeats, transitions) => {
      const path = join(t.testdir(), `old-${run++}.sqlite`)
      // The schema as 53fdc3f left it, written as another program would: plain SQL, no kept audit kept.
      const old = openKeptDatabase(path)
      old.exec('PRAGMA journal_mode = WAL')
      for (const sql of migrations.slice(0, MIGRATIONS_OF_53FDC3F)) old.exec(sql)
      old.pragma(`user_version = ${MIGRATIONS_OF_53FDC3F}`)
      old.prepare(`INSERT INTO events (event_no, timestamp_ms, snr, known_source_name, actions, baseband_requested, update_timestamp) VALUES (?, ?, 9, 'EXT', ?, 1, 1)`).run(
        EVENT,
        T0,
        JSON.stringify({ want: { baseband: true, kko_baseband: true }, got: {} })
      )
      const addHeartbeat = old.prepare('INSERT INTO heartbeats (heartbeat_id, event_no, doc, update_timestamp) VALUES (?, ?, ?, 1)')
      heartbeats.forEach((odd, id) => addHeartbeat.run(id, EVENT, oddDocument(id, odd)))
      const addTransition = old.prepare(`INSERT INTO transitions (event_no, key, "from", "to", at, by) VALUES (?, ?, NULL, ?, ?, 'other')`)
      for (const { key, to, at } of transitions) addTransition.run(EVENT, key, to, at)
      old.close()

      const store = openSqliteStore(path, sites, { now: () => T0 })
      try {
        const db = openKeptDatabase(path)
        try {
          const reader = new EventRecordsReader(db, sites)
          const facts = factsOf(EVENT, reader.of([EVENT]).get(EVENT)!, sites)
          t.strictSame(facts, factsOf(EVENT, reader.everythingOf([EVENT]).get(EVENT)!, sites))
          t.strictSame((await store.audits.find(EVENT))?.facts, facts, 'the kept facts the upgrade made')
        } finally {
          db.close()
        }
      } finally {
        await store.close()
      }
    }),
    { numRuns: 60 }
  )
})

t.test('a heartbeat document that is not JSON does not stop the upgrade, nor any write of its row, and counts as neither finished nor erring', async (t) => {
  const path = join(t.testdir(), 'broken.sqlite')
  const old = openKeptDatabase(path)
  for (const sql of migrations.slice(0, MIGRATIONS_OF_53FDC3F)) old.exec(sql)
  old.pragma(`user_version = ${MIGRATIONS_OF_53FDC3F}`)
  old.prepare('INSERT INTO heartbeats (heartbeat_id, event_no, doc, update_timestamp) VALUES (1, ?, ?, 1)').run(EVENT, '{"site": "chime", "received": {"finished_time": "x"')
  old.close()
  const store = openSqliteStore(path, sites, { now: () => T0 })
  t.teardown(() => store.close())
  const { db, reader } = readerOf(t, path)
  t.strictSame(reader.of([EVENT]).get(EVENT)!.heartbeats, [], 'read as no heartbeat the facts count')
  t.equal(db.prepare('DELETE FROM heartbeats WHERE heartbeat_id = 1').run().changes, 1, 'the row can be removed')
})
