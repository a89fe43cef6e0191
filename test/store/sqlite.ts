import { openKeptDatabase } from '../../src/store/sqlite/native-lifetimes.js'
import { join } from 'node:path'
import t from 'tap'
import { StoreUnavailableError } from '../../src/store/port.js'
import { openSqliteStore } from '../../src/store/sqlite/store.js'
import { openDatabase, PAGE_CACHE_KIB } from '../../src/store/sqlite/database.js'
import { KEPT_CHANGES } from '../../src/store/sqlite/kept-rows.js'
import { storeConformance, type OpenStore } from './conformance.js'
import { historyConformance } from './history-conformance.js'
import { historyPartsConformance } from './history-parts.js'
import { tracerConformance } from './tracer-conformance.js'
import { auditConformance } from './audit-conformance.js'
import { keptAuditChecks, type OpenTamperableStore, type Tamper } from './kept-audit-checks.js'
import { defaultSites } from '../sites.js'
import { storeBesideOtherProgram } from './fixtures/store-beside-other.js'
import { siteModel } from '../../src/vocabulary.js'

const openFresh: OpenStore = async (t, sites) => {
  const store = openSqliteStore(join(t.testdir(), 'tracer.sqlite'), sites ?? defaultSites)
  t.teardown(() => store.close())
  return store
}

t.test('the SQLite adapter passes the store conformance suite', async (t) => {
  storeConformance(t, openFresh)
  tracerConformance(t, openFresh)
  historyConformance(t, openFresh)
  historyPartsConformance(t, openFresh)
})

const openAudited: OpenTamperableStore = async (t, { sites, deadlines, now }) => {
  const path = join(t.testdir(), `audit-${Math.random().toString(36).slice(2)}.sqlite`)
  let store = openSqliteStore(path, sites, { deadlines, now })
  t.teardown(() => store.close())
  return {
    store,
    tamper: sqliteTamper(path),
    async reopen(next) {
      await store.close()
      store = openSqliteStore(path, sites, { deadlines: next, now })
      return store
    }
  }
}

t.test('the SQLite adapter keeps the audit the records make', async (t) => {
  auditConformance(t, openAudited, defaultSites)
  keptAuditChecks(t, openAudited, defaultSites)
})

/** Writes into the store's file as another program would: its own connection, plain SQL. */
function sqliteTamper(path: string): Tamper {
  const run = async (sql: string, eventNo: number) => {
    const db = openKeptDatabase(path)
    try {
      db.prepare(sql).run(eventNo)
    } finally {
      db.close()
    }
  }
  return {
    // As a bug or a hand edit could: the fixed record (or the report) and the verdict say complete.
    serveComplete: (eventNo) =>
      run(
        `UPDATE audits SET verdict = 'complete',
           fixed = CASE WHEN fixed IS NULL THEN NULL ELSE json_set(fixed, '$.verdict', 'complete', '$.findings', json('[]')) END,
           report = CASE WHEN report IS NULL THEN NULL ELSE json_set(report, '$.contradictions', json('[]'), '$.pending', json('[]'), '$.complete', json('true')) END
         WHERE event_no = ?`,
        eventNo
      ),
    breakFacts: (eventNo) => run(`UPDATE audits SET facts = 'not json' WHERE event_no = ?`, eventNo),
    breakReport: (eventNo) => run(`UPDATE audits SET report = '{"nothing":"of a report"}', fixed = NULL WHERE event_no = ?`, eventNo),
    keptColumns: [
      { column: 'events.output', edit: (eventNo) => run(`UPDATE events SET output = json_set(output, '$.known_source_name', 'FORGED-EXT') WHERE event_no = ?`, eventNo) },
      { column: 'events.callback_head', edit: (eventNo) => run(`UPDATE events SET callback_head = replace(callback_head, '"FRB"', '"FORGED-EXT"') WHERE event_no = ?`, eventNo) },
      { column: 'events.baseband_requested', edit: (eventNo) => run('UPDATE events SET baseband_requested = 0 WHERE event_no = ?', eventNo) },
      { column: 'traces.output', edit: (eventNo) => run(`UPDATE traces SET output = json_set(output, '$."stages/tsar_classification"', 'incomplete') WHERE event_no = ?`, eventNo) }
    ]
  }
}

t.test('a window read of the records takes the events with a kept audit whose flag was cleared by hand, in order, each once', async (t) => {
  const path = join(t.testdir(), 'tracer.sqlite')
  const store = openSqliteStore(path, defaultSites)
  t.teardown(() => store.close())
  const event = (event_no: number, want: Record<string, boolean>) => ({
    event_no, timestamp: 1000 * (event_no % 7), snr: 10, dm: null, known_source_name: 'EXT', tsar_classification: null,
    actions: { want, got: {} }, baseband_requested: false, update_timestamp: 1
  })
  const numbers = Array.from({ length: 40 }, (_, index) => index + 1)
  await store.events.upsert(numbers.map((eventNo) => event(eventNo, eventNo % 5 === 0 ? { intensity: true } : { baseband: true })))
  const db = openKeptDatabase(path)
  // Flags cleared (the kept rows stay), and kept rows removed (the flags stay): either range alone names each event.
  db.prepare('UPDATE events SET baseband_requested = 0 WHERE event_no % 3 = 0').run()
  db.prepare('DELETE FROM audits WHERE event_no % 4 = 0').run()
  db.close()
  const read: number[] = []
  let after: { timestamp: number; event_no: number } | undefined
  for (;;) {
    const page = await store.views.windowPage({ start: 0, end: 10_000 }, after, 4)
    read.push(...page.map((parts) => parts.event.event_no))
    if (page.length < 4) break
    after = { timestamp: page.at(-1)!.event.timestamp, event_no: page.at(-1)!.event.event_no }
  }
  const expected = numbers.filter((eventNo) => eventNo % 5 !== 0 && !(eventNo % 3 === 0 && eventNo % 4 === 0))
  t.strictSame(read, expected.sort((a, b) => (a % 7) - (b % 7) || a - b), 'every event whose actions ask for baseband data and one of the two still names, by time, once')
})

t.test('the file is created with its folder, in WAL mode, at the current schema version', async (t) => {
  const path = join(t.testdir(), 'nested', 'folder', 'tracer.sqlite')
  const store = openSqliteStore(path, defaultSites)
  await store.close()
  const db = openKeptDatabase(path, { readonly: true })
  t.teardown(() => db.close())
  t.equal(db.pragma('journal_mode', { simple: true }), 'wal')
  t.ok((db.pragma('user_version', { simple: true }) as number) >= 1)
})

t.test('every connection, read-write or read-only, keeps a page cache of PAGE_CACHE_KIB, not the build’s 16 MB', async (t) => {
  const path = join(t.testdir(), 'tracer.sqlite')
  for (const access of ['read-write', 'read-only'] as const) {
    const db = openDatabase(path, 0, undefined, 'create', access)
    t.equal(db.pragma('cache_size', { simple: true }), -PAGE_CACHE_KIB, access)
    db.close()
  }
  t.ok(PAGE_CACHE_KIB < 16_000, 'smaller than better-sqlite3’s own')
})

t.test('reopening keeps the data and does not migrate twice', async (t) => {
  const path = join(t.testdir(), 'tracer.sqlite')
  const first = openSqliteStore(path, defaultSites)
  await first.users.create({ name: 'ana', password_hash: 'h', role: 'reader', created_at: 1 })
  await first.close()
  const second = openSqliteStore(path, defaultSites)
  t.teardown(() => second.close())
  t.equal((await second.users.find('ana'))?.name, 'ana')
})

t.test('the stored output texts are made again when the store is opened with other sites', async (t) => {
  const path = join(t.testdir(), 'tracer.sqlite')
  const all = { start: 0, end: 10 * 60_000 }
  const event = (event_no: number) => ({
    event_no, timestamp: event_no * 60_000, snr: 10, dm: null, known_source_name: 'EXT', tsar_classification: null,
    actions: { want: { b_baseband: true }, got: {} }, baseband_requested: true, update_timestamp: 1
  })
  const read = async (sites: readonly string[]) => {
    const store = openSqliteStore(path, siteModel(sites))
    try {
      const callbacks = (await store.views.callbackPage(all, undefined, 10)).map((row) => JSON.parse(row.json) as { trace?: object })
      const events = (await store.events.page({ window: all, order: 'asc', limit: 10 })).map((row) => JSON.parse(row.json) as { actions: object })
      return { callbacks, events }
    } finally {
      await store.close()
    }
  }
  const first = openSqliteStore(path, siteModel(['a', 'b']))
  await first.events.upsert([event(1)])
  await first.traces.create(1, 5)
  await first.close()

  const other = await read(['a', 'c'])
  t.strictSame(other.callbacks, [], 'b_baseband asks nothing of sites a and c')
  t.strictSame(other.events[0]?.actions, { want: {}, got: {} })
  const again = await read(['a', 'b'])
  t.equal(again.callbacks.length, 1)
  t.ok(Object.keys(again.callbacks[0]!.trace!).includes('stages/data_registration/sites/b'), 'the trace text has the sites again')
  t.strictSame(again.events[0]?.actions, { want: { b_baseband: true }, got: {} })
})

t.test('rows an older version of the service wrote without output texts are read from their records', async (t) => {
  const path = join(t.testdir(), 'tracer.sqlite')
  const store = openSqliteStore(path, defaultSites)
  t.teardown(() => store.close())
  const window = { start: 0, end: 10 * 60_000 }
  await store.events.upsert([{
    event_no: 1, timestamp: 60_000, snr: 10, dm: null, known_source_name: 'EXT', tsar_classification: null,
    actions: { want: { baseband: true }, got: {} }, baseband_requested: true, update_timestamp: 1
  }])
  await store.traces.setStatus(1, 'stages/tsar_classification', 'complete', 5, 'tsar')
  const before = { callbacks: await store.views.callbackPage(window, undefined, 10), events: await store.events.page({ window, order: 'asc', limit: 10 }) }
  const db = openKeptDatabase(path)
  db.exec('UPDATE events SET output = NULL, callback_head = NULL; UPDATE traces SET output = NULL')
  db.close()
  t.strictSame(await store.views.callbackPage(window, undefined, 10), before.callbacks)
  t.strictSame(await store.events.page({ window, order: 'asc', limit: 10 }), before.events)
})

t.test('a store written by a newer version is refused, not damaged', async (t) => {
  const path = join(t.testdir(), 'tracer.sqlite')
  const db = openKeptDatabase(path)
  db.pragma('user_version = 999')
  db.close()
  t.throws(() => openSqliteStore(path, defaultSites), /schema is version 999, newer than this service knows/)
})

t.test('two connections to one file see each other’s writes (several processes share a file)', async (t) => {
  const path = join(t.testdir(), 'tracer.sqlite')
  const a = openSqliteStore(path, defaultSites)
  const b = openSqliteStore(path, defaultSites)
  t.teardown(async () => {
    await a.close()
    await b.close()
  })
  await a.users.create({ name: 'ana', password_hash: 'h', role: 'reader', created_at: 1 })
  t.equal((await b.users.find('ana'))?.name, 'ana')
  await b.users.saveRefreshToken('ana', 'f'.repeat(64), 2)
  t.equal((await a.users.find('ana'))?.refresh_token_hash, 'f'.repeat(64))
})

t.test('a closed store rejects with StoreUnavailableError', async (t) => {
  const store = openSqliteStore(join(t.testdir(), 'tracer.sqlite'), defaultSites)
  await store.close()
  await t.rejects(store.ping(), StoreUnavailableError)
  await t.rejects(store.users.find('ana'), StoreUnavailableError)
})

t.test('the deadline check forgets verdict changes beyond the last KEPT_CHANGES, so the table does not grow for ever', async (t) => {
  const { store, other: db } = storeBesideOtherProgram(t)
  const insert = db.prepare('INSERT INTO audit_changes (event_no, message) VALUES (?, ?)')
  db.transaction(() => {
    for (let i = 0; i < KEPT_CHANGES + 50; i++) insert.run(i, '{}')
  })()
  const last = await store.verdictChanges.position()
  await store.audits.settle([], Date.now())
  t.equal(db.prepare('SELECT count(*) FROM audit_changes').pluck().get(), KEPT_CHANGES, 'the newest are kept')
  t.equal(await store.verdictChanges.position(), last, 'the feed stands where it stood')
})
