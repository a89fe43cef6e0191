import { join } from 'node:path'
import t from 'tap'
import { openKeptDatabase } from '../../src/store/sqlite/native-lifetimes.js'
import { rebuildOutputTexts } from '../../src/store/sqlite/output-texts.js'
import { openSqliteStore } from '../../src/store/sqlite/store.js'
import { siteModel } from '../../src/vocabulary.js'

/*
 * Issue 40, point 6 (in part): a rewrite of the output texts (other sites, or a release that
 * writes them otherwise) goes in batches that each record how far they went, so a start killed
 * half way keeps what it did, and the next start goes on after it rather than from scratch.
 */

const FOUR = siteModel(['chime', 'kko', 'gbo', 'hco'])
const THREE = siteModel(['chime', 'kko', 'gbo'])
const EVENTS = 25

t.test('a rewrite of the output texts killed half way keeps the batches it committed, and the next goes on after them', async (t) => {
  const path = join(t.testdir(), 'tracer.sqlite')
  const store = openSqliteStore(path, FOUR)
  // Each asks for baseband data at hco only: listed with four sites, not with three.
  await store.events.upsert(
    Array.from({ length: EVENTS }, (_, i) => ({
      event_no: i + 1, timestamp: 60_000 * (i + 1), snr: 10, dm: null, known_source_name: 'EXT', tsar_classification: null,
      actions: { want: { hco_baseband: true }, got: {} }, baseband_requested: true, update_timestamp: 1
    }))
  )
  await store.traces.upsert(Array.from({ length: EVENTS }, (_, i) => ({ event_no: i + 1, 'stages/tsar_classification': 'complete' })))
  await store.close()

  const db = openKeptDatabase(path)
  t.teardown(() => db.close())
  const listed = () => db.prepare<[], number>('SELECT event_no FROM events WHERE baseband_requested = 1 ORDER BY event_no').pluck().all()
  const tracesNamingHco = () => db.prepare<[], number>(`SELECT count(*) FROM traces WHERE output LIKE '%/sites/hco%'`).pluck().get()
  t.equal(listed().length, EVENTS)

  // The process dies while it rewrites event 15, in its second batch of ten.
  db.exec(`CREATE TEMP TRIGGER killed BEFORE UPDATE OF output ON main.events WHEN NEW.event_no = 15 BEGIN SELECT RAISE(ABORT, 'killed'); END`)
  t.throws(() => rebuildOutputTexts(db, THREE, 10), /killed/)
  t.strictSame(listed(), Array.from({ length: EVENTS - 10 }, (_, i) => i + 11), 'the first batch, committed, is kept')

  db.exec('DROP TRIGGER killed')
  // What the next start rewrites: rows after the first batch only.
  const rewritten: number[] = []
  db.function('noted', (eventNo: number) => (rewritten.push(eventNo), 0))
  db.exec(`CREATE TEMP TRIGGER noted AFTER UPDATE OF output ON main.events BEGIN SELECT noted(NEW.event_no); END`)
  t.equal(rebuildOutputTexts(db, THREE, 10), true, 'texts made before were made again')
  t.strictSame(rewritten, Array.from({ length: EVENTS - 10 }, (_, i) => i + 11), 'the next start goes on after the batch committed')
  t.strictSame(listed(), [], 'no event is listed for a site the store no longer has')
  t.equal(tracesNamingHco(), 0, 'no trace text names it')
  t.equal(db.prepare<[], number>(`SELECT count(*) FROM settings WHERE name = 'output_texts_plan'`).pluck().get(), 0, 'the plan is gone once done')
  t.equal(rebuildOutputTexts(db, THREE, 10), false, 'and the next start has nothing to do')
})
