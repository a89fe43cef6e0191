import { join } from 'node:path'
import t from 'tap'
import { outputSignature } from '../../src/domain/output-forms.js'
import type { EventPosition, EventRecord } from '../../src/domain/records.js'
import type { Store } from '../../src/store/port.js'
import { openKeptDatabase } from '../../src/store/sqlite/native-lifetimes.js'
import { openSqliteStore, type SqliteOptions } from '../../src/store/sqlite/store.js'
import { siteModel, type Sites } from '../../src/vocabulary.js'

/*
 * Issue 40, finding 6: a start whose output texts were made for other sites makes them again while
 * it serves, a batch at a time between requests, the output texts first and then the kept audit.
 * It is handed over after one batch; until the texts are made, every read sends what the records
 * say for the configured sites (never a text made for the old ones), exactly what a store made
 * again whole before it served sends; a close half way leaves the plan, and the next start goes on
 * after it.
 */

const FOUR = siteModel(['chime', 'kko', 'gbo', 'hco'])
const THREE = siteModel(['chime', 'kko', 'gbo'])
const NOW = Date.UTC(2026, 2, 1, 12)
const MINUTE = 60_000
const BASE = NOW - 2 * 86_400_000
const EVENTS = 60
const BATCH = 10
const WINDOW = { start: BASE, end: BASE + (EVENTS + 1) * MINUTE }

/** Every third event asks for baseband data at hco only: listed with four sites, not with three. */
const actionsOf = (i: number): EventRecord['actions'] =>
  i % 3 === 0 ? { want: { hco_baseband: true }, got: {} } : i % 3 === 1 ? { want: { kko_baseband: true, hco_baseband: true }, got: { kko_baseband: true } } : { want: {}, got: {} }

const eventOf = (i: number, actions = actionsOf(i)): EventRecord => ({
  event_no: i, timestamp: BASE + i * MINUTE, snr: 8 + (i % 7), dm: i % 2 === 0 ? null : 100 + i, known_source_name: i % 4 === 0 ? 'FRB 1' : 'EXT',
  tsar_classification: null, actions, baseband_requested: true, update_timestamp: 1
})

const open = (path: string, sites: Sites, options: SqliteOptions = {}) => openSqliteStore(path, sites, { now: () => NOW, ...options })

/** A store whose events, traces and kept audit were written under four sites, closed. */
async function storeOfFourSites(path: string) {
  const store = open(path, FOUR)
  await store.events.upsert(Array.from({ length: EVENTS }, (_, i) => eventOf(i + 1)))
  // Every other event has a trace, some of it at hco, which three sites no longer output.
  await store.traces.upsert(
    Array.from({ length: EVENTS / 2 }, (_, i) => ({
      event_no: 2 * i + 1, 'stages/tsar_classification': 'complete', 'stages/baseband_callback_request/sites/hco': 'complete', 'stages/baseband_conversion/sites/kko': i % 2 === 0 ? 'complete' : 'incomplete'
    }))
  )
  await store.close()
}

/** Every page of a keyset read, `limit` at a time. */
async function allPages<T>(read: (after: EventPosition | undefined, limit: number) => Promise<T[]>, position: (item: T) => EventPosition, limit = 7): Promise<T[]> {
  const all: T[] = []
  for (let after: EventPosition | undefined; ; ) {
    const page = await read(after, limit)
    all.push(...page)
    if (page.length < limit) return all
    after = position(page.at(-1)!)
  }
}

/** What the reads that send stored texts or use the baseband flag send of the window. */
async function readsOf(store: Store) {
  const list = (order: 'asc' | 'desc', basebandRequested?: boolean) =>
    allPages((after, limit) => store.events.page({ window: WINDOW, order, limit, ...(after === undefined ? {} : { after }), ...(basebandRequested === undefined ? {} : { basebandRequested }) }), (row) => row.position)
  return {
    events: await list('desc'),
    eventsAscending: await list('asc'),
    requested: await list('desc', true),
    notRequested: await list('asc', false),
    callbacks: await allPages((after, limit) => store.views.callbackPage(WINDOW, after, limit), (row) => row.position),
    windowParts: await allPages((after, limit) => store.views.windowPage(WINDOW, after, limit), ({ event }) => event)
  }
}

/** A copy of what is committed at `path` (the WAL included, while a store holds it open), its kept audit forgotten when asked. */
function copyOf(path: string, name: string, { forgetAudit = false } = {}): string {
  const copy = join(path, '..', name)
  const source = openKeptDatabase(path, { readonly: true })
  source.exec(`VACUUM INTO '${copy}'`)
  source.close()
  if (forgetAudit) {
    const db = openKeptDatabase(copy)
    db.exec(`DELETE FROM audits; DELETE FROM settings WHERE name LIKE 'kept_audit%'`)
    db.close()
  }
  return copy
}

/** What the same records send once made again whole for the sites before serving: a copy opened `before-open`. */
async function madeWhole(path: string, name: string, sites = THREE) {
  const reference = open(copyOf(path, name), sites)
  try {
    return await readsOf(reference)
  } finally {
    await reference.close()
  }
}

function settingsOf(path: string) {
  const db = openKeptDatabase(path, { readonly: true })
  try {
    const setting = (name: string) => db.prepare<[string], string>('SELECT value FROM settings WHERE name = ?').pluck().get(name)
    const plan = setting('output_texts_plan')
    return { texts: setting('output_texts'), plan: plan === undefined ? undefined : (JSON.parse(plan) as { table: string; after: number }) }
  } finally {
    db.close()
  }
}

function auditRows(path: string) {
  const db = openKeptDatabase(path, { readonly: true })
  try {
    return db.prepare('SELECT * FROM audits ORDER BY event_no').raw().all()
  } finally {
    db.close()
  }
}

t.test('a start with other sites is handed over after one batch of texts, reads send what the records say meanwhile, and a close half way goes on from the plan', async (t) => {
  const path = join(t.testdir(), 'tracer.sqlite')
  await storeOfFourSites(path)
  const serving = (notes: string[], steps: (() => void)[]) =>
    open(path, THREE, { rebuild: 'while-serving', textsBatch: BATCH, rebuildBatch: BATCH, rebuildPace: (next) => steps.push(next), notify: (line) => notes.push(line) })

  const notes: string[] = []
  const steps: (() => void)[] = []
  const first = serving(notes, steps)
  t.strictSame(settingsOf(path).plan, { signature: outputSignature(THREE), table: 'events', after: BATCH }, 'handed over after one batch of texts, recorded')
  t.not(settingsOf(path).texts, outputSignature(THREE), 'the texts are not all made yet')
  t.equal(steps.length, 1, 'the next batch waits for the event loop')
  t.equal(notes.length, 3)
  t.match(notes[0], /^The store's configuration changed \(TRACER_SITES chime,kko,gbo,hco -> chime,kko,gbo\)/)
  t.match(notes[1], /^The output texts are being made again \(other sites.*\), a batch at a time while the instance serves/)
  t.match(notes[2], /^The kept audit is being made again \(from the records\)/)
  t.not(first.keptAudit.rebuilding(), null, 'the kept audit waits for the texts, and says so')
  await t.rejects(first.audits.windowPage(WINDOW, undefined, 5), { name: 'KeptAuditRebuildingError' }, 'nothing is read of an audit made for other sites')

  t.same(await readsOf(first), await madeWhole(path, 'after-one-batch.sqlite'), 'after one batch: every read as the store made again whole sends it')
  t.ok((await readsOf(first)).requested.length > 0, 'the window has events that ask for baseband data')

  // Writes meanwhile: an event the rewrite has passed and ones it has not reached.
  await first.events.upsert([eventOf(5, { want: { hco_baseband: true }, got: {} }), eventOf(44, { want: { gbo_baseband: true }, got: {} })])
  await first.traces.setStatus(3, 'stages/baseband_conversion/sites/gbo', 'complete', NOW / 1000, 'test')
  await first.traces.setStatus(49, 'stages/baseband_conversion/sites/hco', 'complete', NOW / 1000, 'test')
  steps.shift()!()
  t.equal(settingsOf(path).plan?.after, 2 * BATCH)
  t.same(await readsOf(first), await madeWhole(path, 'after-writes.sqlite'), 'with writes made meanwhile, still as the store made again whole')
  steps.shift()!()
  t.equal(settingsOf(path).plan?.after, 3 * BATCH)
  await first.close()
  t.equal(steps.length, 1, 'a batch was waiting when the store closed')
  steps.shift()!()
  t.equal(settingsOf(path).plan?.after, 3 * BATCH, 'and a closed store makes none')

  const reopenNotes: string[] = []
  const reopenSteps: (() => void)[] = []
  const second = serving(reopenNotes, reopenSteps)
  t.teardown(() => second.close())
  t.equal(settingsOf(path).plan?.after, 4 * BATCH, 'the next start goes on after the batches committed: one batch more')
  t.match(reopenNotes[0], /going on from where a start before this one stopped/)
  t.same(await readsOf(second), await madeWhole(path, 'reopened.sqlite'), 'after the reopen, as the store made again whole')

  let made = false
  void second.keptAudit.made.then(() => (made = true))
  while (settingsOf(path).texts !== outputSignature(THREE)) {
    t.ok(reopenSteps.length === 1, 'one batch at a time')
    reopenSteps.shift()!()
  }
  t.equal(settingsOf(path).plan, undefined, 'the texts are made: no plan is left')
  t.equal(reopenNotes.length, 3)
  t.match(reopenNotes[1], /^The kept audit is being made again \(from the records\)/)
  t.notMatch(reopenNotes[1], /going on/, 'no batch of the audit was made before')
  t.match(reopenNotes[2], /^The output texts were made again/)
  t.not(second.keptAudit.rebuilding(), null, 'then the kept audit is made')
  while (reopenSteps.length > 0) reopenSteps.shift()!()
  await second.keptAudit.made
  t.ok(made)
  t.equal(second.keptAudit.rebuilding(), null)
  t.match(reopenNotes.at(-1), /^The kept audit was made again \(from the records\)/)

  const db = openKeptDatabase(path, { readonly: true })
  t.teardown(() => db.close())
  t.equal(db.prepare<[], number>(`SELECT count(*) FROM events WHERE baseband_requested = 1 AND actions NOT LIKE '%kko%' AND actions NOT LIKE '%gbo%'`).pluck().get(), 0, 'no event is flagged for hco alone')
  t.equal(db.prepare<[], number>(`SELECT count(*) FROM traces WHERE output LIKE '%/sites/hco%'`).pluck().get(), 0, 'no trace text names hco')
  t.same(await readsOf(second), await madeWhole(path, 'made.sqlite'), 'once made, the reads are the same still')
  const reference = copyOf(path, 'audit-from-the-start.sqlite', { forgetAudit: true })
  await open(reference, THREE).close()
  t.same(auditRows(path), auditRows(reference), 'the kept audit made after the texts is the one a rebuild from the start makes')
})

t.test('a release that writes the texts otherwise: the kept audit is served meanwhile, and no read sends an old text, nor does a read-only command', async (t) => {
  const path = join(t.testdir(), 'tracer.sqlite')
  await storeOfFourSites(path)
  // What an older release left: texts (and flags) it made otherwise, under its own signature.
  const db = openKeptDatabase(path)
  db.exec(`UPDATE settings SET value = 'another release' WHERE name = 'output_texts';
           UPDATE events SET output = '{"old":true}', callback_head = '{"old":true', baseband_requested = 1 - baseband_requested;
           UPDATE traces SET output = '{"old":true}'`)
  db.close()
  const expected = await madeWhole(path, 'reference.sqlite', FOUR)
  t.ok(expected.requested.length > 0 && expected.callbacks.length > 0)

  const steps: (() => void)[] = []
  const store = open(path, FOUR, { rebuild: 'while-serving', textsBatch: BATCH, rebuildPace: (next) => steps.push(next) })
  t.teardown(() => store.close())
  t.equal(steps.length, 1, 'handed over after one batch')
  t.equal(store.keptAudit.rebuilding(), null, 'the kept audit was made for these sites: it is served')
  await store.keptAudit.made
  t.ok((await store.audits.windowPage(WINDOW, undefined, 5)).length > 0)
  const reads = await readsOf(store)
  t.same(reads, expected, 'every read as the store made again whole sends it')
  t.notMatch(JSON.stringify(reads), /old/, 'no old text is sent')

  // A command that only reads, opened while the rewrite is under way, makes none and reads as the records say.
  const command = open(path, FOUR, { configuration: 'read', access: 'read-only' })
  t.teardown(() => command.close())
  t.same(await readsOf(command), expected, 'a command that only reads sends the same')
  while (steps.length > 0) steps.shift()!()
  t.equal(settingsOf(path).texts, outputSignature(FOUR))
  t.same(await readsOf(store), expected, 'once made, the same')
})

t.test("a server's batches wait for its listening: none runs between the steps of the app's start", async (t) => {
  const path = join(t.testdir(), 'tracer.sqlite')
  await storeOfFourSites(path)
  const steps: (() => void)[] = []
  let listening = () => {}
  const listened = new Promise<void>((resolve) => (listening = resolve))
  const store = open(path, THREE, { rebuild: 'while-serving', textsBatch: BATCH, rebuildPace: (next) => steps.push(next), rebuildAfter: listened })
  t.teardown(() => store.close())
  t.equal(settingsOf(path).plan?.after, BATCH, 'the first batch is made at open')
  await new Promise((resolve) => setImmediate(resolve))
  t.equal(steps.length, 0, 'the next waits')
  listening()
  await listened
  t.equal(steps.length, 1, 'and comes once the server listens')
})
