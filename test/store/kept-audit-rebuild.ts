import { openKeptDatabase } from '../../src/store/sqlite/native-lifetimes.js'
import { copyFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { seedDemo } from '../../src/demo/generate.js'
import { DEFAULT_STAGE_DEADLINES, parseStageDeadlines } from '../../src/domain/stage-deadlines.js'
import { openSqliteStore, type SqliteOptions } from '../../src/store/sqlite/store.js'
import { siteModel, type Sites } from '../../src/vocabulary.js'

/*
 * Issue 29, finding 5: a kept audit made again at start is made in short transactions, in order of
 * event number, each recording how far it went, so a start killed half way leaves the batches done
 * and the next start goes on after them; writes between two batches are kept.
 */

const FOUR = siteModel(['chime', 'kko', 'gbo', 'hco'])
const THREE = siteModel(['chime', 'kko', 'gbo'])
const DEADLINES = parseStageDeadlines(DEFAULT_STAGE_DEADLINES)
const SHORTER = parseStageDeadlines('data_registration=6h,baseband_conversion=2h')
const NOW = Date.UTC(2026, 2, 1, 12)
const now = () => NOW
const BATCH = 10

/** Every kept row and the settings, as stored, in order. */
function kept(path: string) {
  const db = openKeptDatabase(path, { readonly: true })
  try {
    return {
      rows: db.prepare('SELECT * FROM audits ORDER BY event_no').raw().all(),
      settings: db.prepare<[], [string, string]>(`SELECT name, value FROM settings WHERE name LIKE 'kept_audit%' ORDER BY name`).raw().all()
    }
  } finally {
    db.close()
  }
}

/** The same records with no kept audit at all: the next open makes it from the start. */
function forgetKeptAudit(path: string) {
  const db = openKeptDatabase(path)
  try {
    db.exec(`DELETE FROM audits; DELETE FROM settings WHERE name LIKE 'kept_audit%'`)
  } finally {
    db.close()
  }
}

const open = (path: string, sites: Sites, options: SqliteOptions = {}) => openSqliteStore(path, sites, { now, deadlines: DEADLINES, ...options })

/** A store of demo events, kept under four sites and the default deadlines, closed. */
async function demoStore(dir: string): Promise<{ path: string; listed: number }> {
  const path = join(dir, 'tracer.sqlite')
  const store = open(path, FOUR)
  const { basebandEvents } = await seedDemo(store, FOUR, { events: 700, days: 10, seed: 7, now: NOW })
  await store.close()
  return { path, listed: basebandEvents }
}

/** What a write changes of an event's records, through whichever store (process) makes it. */
async function registerAt(store: ReturnType<typeof open>, eventNo: number, sites: Sites) {
  await store.datatrail.put(sites.names.map((site) => ({ event_no: eventNo, member: sites.basebandKeyOf(site), value: { registered: true, num_files: 3, missing_files: [] }, update_timestamp: NOW / 1000 })))
  await store.traces.setStatus(eventNo, 'stages/data_registration/sites/chime', 'complete', NOW / 1000, 'test')
}

t.test('a rebuild stopped between batches goes on after the last one committed, and ends as a rebuild from the start does', async (t) => {
  const dir = t.testdir()
  const { path, listed } = await demoStore(dir)
  t.ok(listed > 6 * BATCH, `enough events in the audit for several batches (${listed})`)
  const eventNos = (kept(path).rows as unknown[][]).map((row) => row[0] as number)

  // A start with other sites, stopped after its first batch (as a kill between two batches leaves it).
  const first = open(path, THREE, { rebuild: 'left', rebuildBatch: BATCH })
  t.same(first.keptAudit.rebuilding(), { done: BATCH, total: listed }, 'one batch done, recorded')
  await t.rejects(first.audits.find(eventNos[0]!), { name: 'KeptAuditRebuildingError', message: /10 of [\d,]+ events done/ }, 'nothing is read of a half-made audit')
  // A write to an event the rebuild has passed, and to one it has not reached.
  await registerAt(first, eventNos[2]!, THREE)
  await registerAt(first, eventNos.at(-2)!, THREE)
  await first.close()

  // Another process's start, also stopped after one batch: it takes the next stretch, not the first again.
  const second = open(path, THREE, { rebuild: 'left', rebuildBatch: BATCH })
  t.same(second.keptAudit.rebuilding(), { done: 2 * BATCH, total: listed }, 'the next start went on from where the first stopped')
  await registerAt(second, eventNos[3]!, THREE)
  await registerAt(second, eventNos.at(-1)!, THREE)
  await second.close()
  const plan = kept(path).settings.find(([name]) => name === 'kept_audit_rebuild')
  t.match(JSON.parse(String(plan?.[1])), { what: 'facts', done: 2 * BATCH, after: eventNos[2 * BATCH - 1] }, 'the plan says how far it went')

  const notes: string[] = []
  const last = open(path, THREE, { rebuildBatch: BATCH, notify: (line) => notes.push(line) })
  t.equal(last.keptAudit.rebuilding(), null, 'made before the store is handed over')
  await last.close()
  t.match(notes.slice(-2), [/going on from 20 of [\d,]+ events done before this start/, /^The kept audit was made again \(from the records\)/])
  const rebuilt = kept(path)
  t.notOk(rebuilt.settings.some(([name]) => name === 'kept_audit_rebuild'), 'no plan is left once it is made')

  const reference = join(dir, 'reference.sqlite')
  copyFileSync(path, reference)
  forgetKeptAudit(reference)
  await open(reference, THREE).close()
  t.same(rebuilt.rows, kept(reference).rows, 'every kept row is what a rebuild from the start makes of the same records')
  t.notMatch(JSON.stringify(rebuilt.rows), /hco/, 'no row is left of the sites it no longer has')
})

t.test('a rebuild that is only of the looks goes on likewise, and a start under other settings makes facts again over a facts rebuild left unfinished', async (t) => {
  const dir = t.testdir()
  const { path } = await demoStore(dir)
  const before = kept(path).rows

  const looks = open(path, FOUR, { deadlines: SHORTER, rebuild: 'left', rebuildBatch: BATCH })
  t.same(looks.keptAudit.rebuilding()?.done, BATCH)
  await looks.close()
  t.match(JSON.parse(String(kept(path).settings.find(([name]) => name === 'kept_audit_rebuild')?.[1])), { what: 'looks' })

  // Back to the settings the audit was made under: the rows already looked at again are looked at once more.
  const back = open(path, FOUR)
  await back.close()
  t.same(kept(path).rows, before, 'every row as it was made under those settings')

  const facts = open(path, THREE, { rebuild: 'left', rebuildBatch: BATCH })
  await facts.close()
  const notes: string[] = []
  await open(path, FOUR, { notify: (line) => notes.push(line) }).close()
  t.match(notes.at(-1), /made again \(from the records\)/, 'half the rows hold facts of other sites: all are made from the records')
  t.same(kept(path).rows, before)
})

t.test('a serving store makes its audit between requests, a batch at a time, and reads of it wait', async (t) => {
  const { path, listed } = await demoStore(t.testdir())
  const steps: (() => void)[] = []
  const notes: string[] = []
  const store = open(path, THREE, { rebuild: 'while-serving', rebuildBatch: BATCH, rebuildPace: (next) => steps.push(next), notify: (line) => notes.push(line) })
  t.teardown(() => store.close())
  t.same(store.keptAudit.rebuilding(), { done: BATCH, total: listed })
  t.match(notes.at(-1), /^The kept audit is being made again \(from the records\).*reads of the audit answer 503 until it is made/)
  t.equal(steps.length, 1, 'the next batch waits for the event loop')
  steps.shift()!()
  t.same(store.keptAudit.rebuilding(), { done: 2 * BATCH, total: listed })
  await t.rejects(store.verdictChanges.position(), { name: 'KeptAuditRebuildingError' }, 'the verdict feed waits too')
  t.equal(await store.events.find(1).then((event) => event?.event_no), 1, 'what does not read the kept audit is served')
  let made = false
  void store.keptAudit.made.then(() => (made = true))
  while (steps.length > 0) steps.shift()!()
  await store.keptAudit.made
  t.ok(made)
  t.equal(store.keptAudit.rebuilding(), null)
  t.match(notes.at(-1), /^The kept audit was made again \(from the records\)/, 'its end is said')
  t.ok((await store.audits.windowPage({ start: NOW - 20 * 86_400_000, end: NOW }, undefined, 5)).length > 0, 'and the audit is read')
})
