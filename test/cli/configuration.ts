import { openKeptDatabase } from '../../src/store/sqlite/native-lifetimes.js'
import type Database from 'better-sqlite3'
import { createHash } from 'node:crypto'
import { join } from 'node:path'
import t from 'tap'
import { run } from './run.js'

/*
 * Issue 27, finding 3: a command applies no configuration of its own to the store. With other
 * TRACER_SITES than the store was made with, `users list` reads and writes nothing else, and
 * `audit` is refused with one line naming the setting and both values. Both leave the file as it was.
 */

/** The file's data as another program sees it: SQLite's count of commits by other connections, and every table's rows. */
function snapshot(db: Database.Database) {
  const tables = db.prepare<[], string>(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`).pluck().all()
  const rows = tables.map((table) => [table, db.prepare(`SELECT * FROM "${table}"`).raw().all()])
  return { dataVersion: db.pragma('data_version', { simple: true }), rows: createHash('sha256').update(JSON.stringify(rows)).digest('hex') }
}

t.test('a command with other sites or deadlines than the store writes nothing; one that reads the audit with other sites is refused', async (t) => {
  const path = join(t.testdir(), 'tracer.sqlite')
  const store = { TRACER_DB: path }
  const seeded = await run(['seed', '--demo', '--events', '200', '--days', '2'], store)
  t.equal(seeded.status, 0, seeded.stderr)
  const db = openKeptDatabase(path, { readonly: true })
  t.teardown(() => db.close())
  const before = snapshot(db)

  const users = await run(['users', 'list', '--json'], { ...store, TRACER_SITES: 'chime,kko' })
  t.equal(users.status, 0, users.stderr)
  t.strictSame(JSON.parse(users.stdout), [], 'users are listed whatever the sites')
  t.strictSame(snapshot(db), before, 'users list wrote nothing')

  const audit = await run(['audit', '--format', 'json'], { ...store, TRACER_SITES: 'chime,kko' })
  t.equal(audit.status, 1)
  t.equal(audit.stdout, '')
  t.match(audit.stderr, /^tracer: TRACER_SITES is chime,kko here but chime,kko,gbo,hco in the store; [^\n]*\n$/, 'one line naming the setting and both values')
  const seedDeadlines = await run(['seed', '--demo', '--events', '5', '--first-event-no', '1000'], { ...store, STAGE_DEADLINES: 'baseband_conversion=3h' })
  t.equal(seedDeadlines.status, 1)
  t.match(seedDeadlines.stderr, /^tracer: STAGE_DEADLINES is [^\n]*baseband_conversion=3h[^\n]* here but [^\n]*baseband_conversion=6h[^\n]* in the store; [^\n]*\n$/)
  // Kept reports hold no deadline (stuck is judged as they are read): the audit under other deadlines is read, not refused.
  const deadlines = await run(['audit', '--format', 'json', '--since', '3d'], { ...store, STAGE_DEADLINES: 'baseband_conversion=3h' })
  t.match(deadlines.status, /^[01]$/, deadlines.stderr)
  t.ok(JSON.parse(deadlines.stdout).summary.events > 0)
  const seed = await run(['seed', '--demo', '--events', '5', '--first-event-no', '1000'], { ...store, TRACER_SITES: 'chime,kko' })
  t.equal(seed.status, 1, 'a command that writes records with other sites is refused too')
  t.match(seed.stderr, /^tracer: TRACER_SITES is chime,kko here/)
  t.strictSame(snapshot(db), before, 'the refused commands wrote nothing')

  const same = await run(['audit', '--format', 'json', '--since', '3d'], store)
  t.match(same.status, /^[01]$/, same.stderr)
  t.equal(JSON.parse(same.stdout).summary.events > 0, true, 'with the store’s configuration, the audit is read')
  t.strictSame(snapshot(db), before, 'and reading it wrote nothing')
})
