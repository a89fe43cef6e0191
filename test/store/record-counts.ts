import fc from 'fast-check'
import { join } from 'node:path'
import t from 'tap'
import type Database from 'better-sqlite3'
import { migrations } from '../../src/store/sqlite/migrations.js'
import { openKeptDatabase } from '../../src/store/sqlite/native-lifetimes.js'
import { RECOUNT_BOUND } from '../../src/store/sqlite/kept-rows.js'
import { openSqliteStore } from '../../src/store/sqlite/store.js'
import { defaultSites as sites } from '../sites.js'
import { storeBesideOtherProgram } from './fixtures/store-beside-other.js'

// Issue 29, finding 1: how many heartbeats an event has is kept beside them, by triggers, so that
// a part of them (and event-status) reads its total rather than counting every row. A history
// gives no total: its count cost every update-trace a write (port.ts, historyPage).

/** What the kept counts must always be: each event's heartbeats, counted. Events without any read as no row or zero. */
function counted(db: Database.Database) {
  return db
    .prepare<[], { event_no: number; heartbeats: number }>('SELECT event_no, COUNT(*) AS heartbeats FROM heartbeats GROUP BY event_no ORDER BY event_no')
    .all()
    .map((row) => [row.event_no, row.heartbeats])
}

function kept(db: Database.Database) {
  return db
    .prepare<[], { event_no: number; heartbeat_count: number }>('SELECT event_no, heartbeat_count FROM record_counts WHERE heartbeat_count <> 0 ORDER BY event_no')
    .all()
    .map((row) => [row.event_no, row.heartbeat_count])
}

const heartbeatDoc = (id: number, eventNo: number) =>
  JSON.stringify({ heartbeat_id: id, event_no: eventNo, site: 'kko', sent: { trigger_time: '2026-01-01T00:00:00Z', error: null }, received: { total_data_files: 1, dir_size_gb: 1, finished_time: null, heartbeat_sent_unix_s: 1 } })

t.test('the kept counts follow every writer: the service, and another program inserting, deleting and moving rows', async (t) => {
  const { store, other } = storeBesideOtherProgram(t)
  const operation = fc.record({
    kind: fc.constantFrom('service-transition', 'service-heartbeat', 'insert-transition', 'delete-transition', 'move-transition', 'insert-heartbeat', 'delete-heartbeat', 'move-heartbeat'),
    eventNo: fc.integer({ min: 1, max: 4 }),
    id: fc.integer({ min: 1, max: 30 })
  })
  let at = 0
  await fc.assert(
    fc.asyncProperty(fc.array(operation, { maxLength: 30 }), async (operations) => {
      for (const { kind, eventNo, id } of operations) {
        at++
        if (kind === 'service-transition') await store.traces.setStatus(eventNo, `stages/k${at}`, 'complete', at, 'w')
        else if (kind === 'service-heartbeat') await store.heartbeats.add([JSON.parse(heartbeatDoc(id, eventNo))], at)
        else if (kind === 'insert-transition') other.prepare(`INSERT INTO transitions (event_no, key, "from", "to", at, by) VALUES (?, 'stages/x', NULL, 'complete', ?, 'other')`).run(eventNo, at)
        else if (kind === 'delete-transition') other.prepare('DELETE FROM transitions WHERE seq = (SELECT seq FROM transitions WHERE event_no = ? ORDER BY seq LIMIT 1)').run(eventNo)
        else if (kind === 'move-transition') other.prepare('UPDATE transitions SET event_no = ? WHERE seq = (SELECT MAX(seq) FROM transitions)').run(eventNo)
        else if (kind === 'insert-heartbeat') other.prepare('INSERT OR IGNORE INTO heartbeats (heartbeat_id, event_no, doc, update_timestamp) VALUES (?, ?, ?, ?)').run(id, eventNo, heartbeatDoc(id, eventNo), at)
        else if (kind === 'delete-heartbeat') other.prepare('DELETE FROM heartbeats WHERE heartbeat_id = ?').run(id)
        else other.prepare('UPDATE heartbeats SET event_no = ? WHERE heartbeat_id = ?').run(eventNo, id)
      }
      t.strictSame(kept(other), counted(other))
      for (let eventNo = 1; eventNo <= 4; eventNo++) {
        const [, heartbeats = 0] = counted(other).find(([event]) => event === eventNo) ?? []
        t.equal((await store.heartbeats.page(eventNo, null, 1)).total, heartbeats, 'a heartbeat part says the kept total')
      }
    }),
    { numRuns: 30 }
  )
})

t.test('a store written before the counts were kept gets them from its rows when it is upgraded', async (t) => {
  const path = join(t.testdir(), 'old.sqlite')
  const old = openKeptDatabase(path)
  const before = migrations.findIndex((sql) => sql.includes('CREATE TABLE record_counts'))
  for (const sql of migrations.slice(0, before)) old.exec(sql)
  old.pragma(`user_version = ${before}`)
  const transition = old.prepare(`INSERT INTO transitions (event_no, key, "from", "to", at, by) VALUES (?, 'stages/x', NULL, 'complete', 1, 'other')`)
  const heartbeat = old.prepare('INSERT INTO heartbeats (heartbeat_id, event_no, doc, update_timestamp) VALUES (?, ?, ?, 1)')
  for (let i = 0; i < 7; i++) transition.run(1)
  for (let i = 0; i < 3; i++) transition.run(2)
  for (let id = 1; id <= 5; id++) heartbeat.run(id, id <= 4 ? 2 : 3, heartbeatDoc(id, id <= 4 ? 2 : 3))
  old.close()

  const store = openSqliteStore(path, sites)
  t.teardown(() => store.close())
  const db = openKeptDatabase(path)
  t.teardown(() => db.close())
  t.strictSame(kept(db), [[2, 4], [3, 1]], 'each event’s heartbeats, counted once at the upgrade')
  t.equal((await store.heartbeats.page(2, null, 2)).total, 4)
})

t.test('the verifier holds the kept counts to the heartbeats and repairs a count that drifted, reading at most its bound an event', async (t) => {
  const { store, other } = storeBesideOtherProgram(t)
  const insert = other.prepare('INSERT INTO heartbeats (heartbeat_id, event_no, doc, update_timestamp) VALUES (?, ?, ?, 1)')
  for (const [id, eventNo] of [[1, 2], [2, 2], [3, 3], [4, 5]] as const) insert.run(id, eventNo, heartbeatDoc(id, eventNo))
  // More heartbeats than a check reads: its count is taken as it is.
  other
    .prepare(
      `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${RECOUNT_BOUND})
       INSERT INTO heartbeats (heartbeat_id, event_no, doc, update_timestamp) SELECT 1000 + i, 9, '{}', 1 FROM n`
    )
    .run()
  // How another program makes them drift: a row replaced without its delete trigger, a count set by hand, a count row removed.
  other.prepare('INSERT OR REPLACE INTO heartbeats (heartbeat_id, event_no, doc, update_timestamp) VALUES (1, 2, ?, 2)').run(heartbeatDoc(1, 2))
  other.prepare('UPDATE record_counts SET heartbeat_count = 7 WHERE event_no = 3').run()
  other.prepare('DELETE FROM record_counts WHERE event_no = 5').run()
  other.prepare('UPDATE record_counts SET heartbeat_count = 1 WHERE event_no = 9').run()
  t.notSame(kept(other), counted(other), 'the counts drifted')

  const recounted = (await store.audits.verify(-1, 50, Date.now())).columns.filter(({ column }) => column === 'record_counts.heartbeat_count').map(({ event_no }) => event_no)
  t.strictSame(recounted, [2, 3, 5], 'each event whose count differed, repaired; event 9 is past the bound and not read')
  t.strictSame(
    kept(other).filter(([eventNo]) => eventNo !== 9),
    counted(other).filter(([eventNo]) => eventNo !== 9),
    'every count within the bound agrees with the rows again'
  )
  t.equal((await store.heartbeats.page(2, null, 10)).total, 2, 'and a part says so')
  t.strictSame((await store.audits.verify(-1, 50, Date.now())).columns, [], 'a second pass finds nothing')
})
