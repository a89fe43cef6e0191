import type { ChildProcess } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { StoreSnapshot, checkCopy } from '../../src/store/sqlite/backup.js'
import { openKeptDatabase } from '../../src/store/sqlite/native-lifetimes.js'
import { openSqliteStore } from '../../src/store/sqlite/store.js'
import { killGroup, spawnOwned } from '../owned-processes.js'
import { defaultSites } from '../sites.js'
import { basebandEvent as event } from '../store/fixtures/baseband-event.js'
import { run } from './run.js'

/*
 * Issue 30, finding 5: `tracer backup FILE` copies the SQLite store while others write to it. The
 * copy holds every write acknowledged before the backup began, passes SQLite's integrity check and
 * opens as a store; FILE is never overwritten without --force.
 */

const WRITER = fileURLToPath(new URL('./backup-writer.js', import.meta.url))
/** The writer's events are numbered from here up, above the seeded ones. */
const FIRST_WRITE = 1_000_000

/** A store seeded in a new test folder (t.testdir() empties the folder each time it is called). */
async function seededStore(t: Test, events = 2000): Promise<{ folder: string; path: string }> {
  const folder = t.testdir()
  const path = join(folder, 'tracer.sqlite')
  const seeded = await run(['seed', '--demo', '--events', String(events), '--days', '2'], { TRACER_DB: path })
  t.equal(seeded.status, 0, seeded.stderr)
  return { folder, path }
}

/** A process writing one event after another through the store; `acknowledged` grows as it reports each write done. */
function writer(t: Test, path: string) {
  const child: ChildProcess = spawnOwned(process.execPath, [WRITER, path, String(FIRST_WRITE)], { stdio: ['ignore', 'pipe', 'inherit'] })
  t.teardown(() => killGroup(child))
  const acknowledged: number[] = []
  createInterface({ input: child.stdout! }).on('line', (line) => acknowledged.push(Number(line)))
  const until = async (count: number) => {
    while (acknowledged.length < count) {
      if (child.exitCode !== null) throw new Error(`the writer exited with ${child.exitCode}`)
      await sleep(5)
    }
  }
  return { child, acknowledged, until }
}

function copyOf(t: Test, path: string) {
  const db = openKeptDatabase(path, { readonly: true, fileMustExist: true })
  t.teardown(() => db.close())
  return {
    integrity: db.prepare<[], string>('PRAGMA integrity_check').pluck().all(),
    written: db.prepare<[number], number>('SELECT event_no FROM events WHERE event_no >= ? ORDER BY event_no').pluck().all(FIRST_WRITE),
    events: db.prepare<[], number>('SELECT COUNT(*) FROM events').pluck().get()!
  }
}

t.test('a backup made while another process writes holds every write acknowledged before it began, and is a whole store', async (t) => {
  const { folder, path } = await seededStore(t)
  const copy = join(folder, 'copy.sqlite')
  const writes = writer(t, path)
  await writes.until(20)

  const before = [...writes.acknowledged]
  const backup = await run(['backup', copy], { TRACER_DB: path })
  const duringBackup = writes.acknowledged.length - before.length
  // The writer was never held up: it goes on after the backup as before it.
  await writes.until(writes.acknowledged.length + 20)
  killGroup(writes.child)

  t.equal(backup.status, 0, backup.stderr)
  t.equal(backup.stderr, '', 'no progress bar when standard error is not a terminal')
  t.match(backup.stdout, /^Backed up .* to .*copy\.sqlite \(\d+\.\d MiB\) in \d+\.\d s: \d+ events, \d+ traces, \d+ datatrail members and \d+ heartbeats; integrity check ok\.\n$/)
  t.notOk(existsSync(`${copy}.partial`), 'the partial file was renamed')
  t.notOk(existsSync(`${copy}-wal`), 'the copy is one file, with no WAL beside it')

  const { integrity, written, events } = copyOf(t, copy)
  t.strictSame(integrity, ['ok'], "the copy passes SQLite's integrity check")
  t.strictSame(before.filter((eventNo) => !written.includes(eventNo)), [], 'every write acknowledged before the backup began is in the copy')
  t.strictSame(written, Array.from({ length: written.length }, (_, index) => FIRST_WRITE + index), 'the writes in the copy are those up to one moment, none missing')
  t.match(backup.stdout, new RegExp(`: ${events} events,`), 'the command counted the copy’s records')
  t.comment(`${before.length} writes acknowledged before the backup, ${duringBackup} during it, ${written.length} in the copy`)

  const store = openSqliteStore(copy, defaultSites, { whenMissing: 'refuse', configuration: 'read' })
  t.teardown(() => store.close())
  t.equal((await store.events.find(before.at(-1)!))?.event_no, before.at(-1), 'the copy opens as a store and reads')
  t.equal((await store.events.find(1))?.event_no, 1, 'the seeded events are there')
})

t.test('the copy is the store at the moment the backup began, however many commits other connections make between its steps', async (t) => {
  // SQLite's backup starts again from the first page after another connection's commit, unless it reads one snapshot.
  const { folder, path } = await seededStore(t, 500)
  const writing = openSqliteStore(path, defaultSites, { configuration: 'write' })
  t.teardown(() => writing.close())
  await writing.events.upsert([event(FIRST_WRITE)])

  const snapshot = StoreSnapshot.take(path, 5000)
  t.teardown(() => snapshot.close())
  const copy = join(folder, 'copy.sqlite')
  let steps = 0
  const committed: Promise<number>[] = []
  // One page a step, and a commit by the store's own connection during each one.
  await snapshot.copyTo(copy, {
    pagesPerStep: 1,
    onStep: () => {
      steps++
      committed.push(writing.events.upsert([event(FIRST_WRITE + steps)]))
    }
  })
  snapshot.close()
  await Promise.all(committed)
  t.ok(steps >= snapshot.pages, `${steps} steps for ${snapshot.pages} pages: the backup never started again`)

  const counts = checkCopy(copy, snapshot)
  t.equal(counts.events, snapshot.counts.events)
  const { integrity, written } = copyOf(t, copy)
  t.strictSame(integrity, ['ok'])
  t.strictSame(written, [FIRST_WRITE], `the write before the snapshot is in the copy, none of the ${committed.length} during it`)
  t.equal((await writing.events.find(FIRST_WRITE + steps))?.event_no, FIRST_WRITE + steps, 'while the writes were all made in the store')
})

t.test('a backup never overwrites: FILE, FILE.partial and the store itself are refused with one line, and --force replaces FILE', async (t) => {
  const { folder, path } = await seededStore(t, 50)
  const env = { TRACER_DB: path }
  const copy = join(folder, 'copy.sqlite')
  writeFileSync(copy, 'precious')

  const refused = await run(['backup', copy], env)
  t.equal(refused.status, 1)
  t.match(refused.stderr, /^tracer: [^\n]*copy\.sqlite exists; nothing was written: pass --force to replace it\n$/)
  t.equal(readFileSync(copy, 'utf8'), 'precious', 'the file is as it was')

  const other = join(folder, 'other.sqlite')
  writeFileSync(`${other}.partial`, 'another backup')
  const running = await run(['backup', other], env)
  t.equal(running.status, 1)
  t.match(running.stderr, /^tracer: [^\n]*other\.sqlite\.partial exists: a backup to [^\n]* is running or was cut short; nothing was written: remove it, or pass --force\n$/)
  t.equal(readFileSync(`${other}.partial`, 'utf8'), 'another backup')

  const itself = await run(['backup', path, '--force'], env)
  t.equal(itself.status, 1)
  t.match(itself.stderr, /^tracer: [^\n]*tracer\.sqlite is the store itself \(TRACER_DB\): write the copy elsewhere\n$/)

  writeFileSync(`${copy}.partial`, 'cut short')
  const forced = await run(['backup', copy, '--force'], env)
  t.equal(forced.status, 0, forced.stderr)
  t.notOk(existsSync(`${copy}.partial`), 'the leftover partial file was replaced, then renamed')
  t.strictSame(copyOf(t, copy).integrity, ['ok'], 'FILE is now the copy')
})

t.test('a backup that cannot be made says why in one line and exits 1', async (t) => {
  const folder = t.testdir()
  const copy = join(folder, 'copy.sqlite')
  const notAStore = join(folder, 'not-a-store.sqlite')
  writeFileSync(notAStore, 'x'.repeat(4096))
  const cases: [Record<string, string>, string, RegExp][] = [
    [{ TRACER_DB: join(folder, 'missing.sqlite') }, copy, /^tracer: There is no SQLite store at .*missing\.sqlite: check TRACER_DB; nothing was written\.\n$/],
    [{ TRACER_DB: ':memory:' }, copy, /^tracer: TRACER_DB is :memory:, [^\n]*there is no file to back up\n$/],
    [{ TRACER_STORE: 'mongodb', MONGODB_URL: 'mongodb://127.0.0.1:1' }, copy, /^tracer: tracer backup copies the SQLite store: back up a MongoDB store with mongodump [^\n]*\n$/],
    [{ TRACER_DB: notAStore }, copy, /^tracer: cannot read the sqlite store at .*not-a-store\.sqlite; nothing was written: the file is not a SQLite database \(SQLITE_NOTADB\)\n$/],
    [{ TRACER_DB: notAStore }, join(folder, 'no-such-folder', 'copy.sqlite'), /^tracer: cannot write [^\n]*: there is no folder [^\n]*no-such-folder\n$/]
  ]
  for (const [env, file, message] of cases) {
    const result = await run(['backup', file], env)
    t.equal(result.status, 1, JSON.stringify(env))
    t.match(result.stderr, message, JSON.stringify(env))
    t.equal(result.stdout, '')
    t.notOk(existsSync(copy) || existsSync(`${copy}.partial`), 'nothing was written')
  }

  const empty = join(folder, 'empty.sqlite')
  const db = openKeptDatabase(empty)
  db.exec('CREATE TABLE other (x)')
  db.close()
  const notTracer = await run(['backup', copy], { TRACER_DB: empty })
  t.equal(notTracer.status, 1)
  t.match(notTracer.stderr, /^tracer: cannot read the sqlite store at [^\n]*; nothing was written: the file is not a tracer store: it has no events, traces, datatrail, heartbeats table\n$/)

  const help = await run(['backup', '--help'], {})
  t.equal(help.status, 0)
  t.match(help.stdout, /^Usage: tracer backup \[options\] <file>/)
})
