import { createHash } from 'node:crypto'
import { existsSync, linkSync, lstatSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { isBeingWritten, StoreSnapshot } from '../../src/store/sqlite/backup.js'
import { openKeptDatabase } from '../../src/store/sqlite/native-lifetimes.js'
import { openSqliteStore } from '../../src/store/sqlite/store.js'
import { defaultSites } from '../sites.js'
import { basebandEvent as event } from '../store/fixtures/baseband-event.js'
import { run } from './run.js'

/*
 * Issue 40, finding 1: `tracer backup FILE --force` onto the live store's -wal replaced the file
 * that held the acknowledged writes, and onto its -shm gave a second instance another wal-index.
 * Every file of the store is refused by any name that reaches it, whatever the flags; FILE.partial
 * is made new, never through a link; a second backup to one name says the first is running.
 */

/** A seeded store held open by a writer, so that its -wal and -shm are there, as under a serving instance. */
async function liveStore(t: Test) {
  const folder = t.testdir()
  const path = join(folder, 'tracer.sqlite')
  const seeded = await run(['seed', '--demo', '--events', '50', '--days', '2'], { TRACER_DB: path })
  t.equal(seeded.status, 0, seeded.stderr)
  const store = openSqliteStore(path, defaultSites, { configuration: 'write' })
  t.teardown(() => store.close())
  await store.events.upsert([event(900_001)])
  t.ok(existsSync(`${path}-wal`) && existsSync(`${path}-shm`), 'the live store has its -wal and -shm')
  return { folder, path, store }
}

const digest = (path: string) => (existsSync(path) ? createHash('sha256').update(readFileSync(path)).digest('hex') : 'none')
const filesOf = (path: string) => ['', '-wal', '-shm', '-journal'].map((suffix) => digest(path + suffix))

t.test('a backup onto any file of the store, by its path, a symbolic link or a hard link, is refused in one line whatever the flags', async (t) => {
  const { folder, path, store } = await liveStore(t)
  const links = {
    'wal-symlink': `${path}-wal`,
    'shm-symlink': `${path}-shm`,
    // SQLite makes the -journal only while a rollback-mode write runs: a link to where it would be.
    'journal-symlink': `${path}-journal`
  }
  for (const [name, to] of Object.entries(links)) symlinkSync(to, join(folder, name))
  linkSync(`${path}-wal`, join(folder, 'wal-hardlink'))
  linkSync(`${path}-shm`, join(folder, 'shm-hardlink'))
  const before = filesOf(path)

  const targets: [string, RegExp][] = [
    [path, /is the store itself \(TRACER_DB\)/],
    [`${path}-wal`, /is the store's -wal file \(TRACER_DB-wal\)/],
    [`${path}-shm`, /is the store's -shm file \(TRACER_DB-shm\)/],
    [`${path}-journal`, /is the store's -journal file \(TRACER_DB-journal\)/],
    [join(folder, 'wal-symlink'), /is the store's -wal file/],
    [join(folder, 'shm-symlink'), /is the store's -shm file/],
    [join(folder, 'journal-symlink'), /is the store's -journal file/],
    [join(folder, 'wal-hardlink'), /is the store's -wal file/],
    [join(folder, 'shm-hardlink'), /is the store's -shm file/],
    [join(folder, '.', 'sub', '..', 'tracer.sqlite-wal'), /is the store's -wal file/]
  ]
  for (const [target, reason] of targets) {
    for (const flags of [[], ['--force']]) {
      const result = await run(['backup', target, ...flags], { TRACER_DB: path })
      t.equal(result.status, 1, `${target} ${flags.join(' ')}`)
      t.match(result.stderr, /^tracer: [^\n]+: write the copy elsewhere\n$/, 'one line')
      t.match(result.stderr, reason, target)
      t.equal(result.stdout, '')
    }
  }
  t.strictSame(filesOf(path), before, 'not a byte of the store, its -wal or its -shm changed')
  t.notOk(existsSync(`${path}-journal`), 'and no -journal was made')
  t.equal(lstatSync(join(folder, 'wal-symlink')).isSymbolicLink(), true, 'the links are as they were')
  t.equal((await store.events.find(900_001))?.event_no, 900_001, 'the write the -wal holds is still served')
})

t.test('a backup whose FILE.partial would be a file of the store is refused: --force would have removed the store', async (t) => {
  const folder = t.testdir()
  const path = join(folder, 'copy.sqlite.partial')
  const seeded = await run(['seed', '--demo', '--events', '20', '--days', '1'], { TRACER_DB: path })
  t.equal(seeded.status, 0, seeded.stderr)
  const before = digest(path)
  const result = await run(['backup', join(folder, 'copy.sqlite'), '--force'], { TRACER_DB: path })
  t.equal(result.status, 1)
  t.match(result.stderr, /^tracer: [^\n]*copy\.sqlite\.partial is the store itself \(TRACER_DB\): write the copy elsewhere\n$/)
  t.equal(digest(path), before, 'the store is as it was')
})

t.test('FILE.partial is never followed: a link there is refused with or without --force, and nothing is written where it leads', async (t) => {
  const { folder, path } = await liveStore(t)
  const copy = join(folder, 'copy.sqlite')
  const elsewhere = join(folder, 'elsewhere.sqlite')
  symlinkSync(elsewhere, `${copy}.partial`)
  for (const flags of [[], ['--force']]) {
    const result = await run(['backup', copy, ...flags], { TRACER_DB: path })
    t.equal(result.status, 1, flags.join(' '))
    t.match(result.stderr, /^tracer: [^\n]*copy\.sqlite\.partial or its journal is a symbolic link: [^\n]*nothing was written\n$/)
    t.notOk(existsSync(elsewhere), 'nothing was written where the link leads')
    t.notOk(existsSync(copy), 'and no copy was made')
    t.ok(lstatSync(`${copy}.partial`).isSymbolicLink(), 'the link is left for the operator to look at')
  }
})

t.test('a backup in progress holds a write lock on FILE.partial, and a second backup to the same name says it is running', async (t) => {
  const { folder, path } = await liveStore(t)
  const copy = join(folder, 'copy.sqlite')

  // A real backup, one page a step: at its first step the partial file is being written.
  const snapshot = StoreSnapshot.take(path, 5000)
  t.teardown(() => snapshot.close())
  writeFileSync(`${copy}.partial`, '')
  const seen: boolean[] = []
  await snapshot.copyTo(`${copy}.partial`, { pagesPerStep: 1, onStep: (copied) => copied < snapshot.pages && seen.push(isBeingWritten(`${copy}.partial`)) })
  snapshot.close()
  t.ok(seen.length > 0 && seen.every(Boolean), `at each of ${seen.length} steps the partial file was being written`)
  t.notOk(isBeingWritten(`${copy}.partial`), 'and no longer once the copy is made')

  // What the running backup holds: a write lock on the partial file.
  const holder = openKeptDatabase(`${copy}.partial`, { fileMustExist: true })
  t.teardown(() => holder.open && holder.close())
  holder.exec('BEGIN IMMEDIATE')
  const before = digest(`${copy}.partial`)
  for (const flags of [[], ['--force']]) {
    const second = await run(['backup', copy, ...flags], { TRACER_DB: path })
    t.equal(second.status, 1, flags.join(' '))
    t.match(second.stderr, /^tracer: [^\n]*a backup to [^\n]*copy\.sqlite is running now \([^\n]*copy\.sqlite\.partial is being written\); nothing was written\n$/)
    t.equal(digest(`${copy}.partial`), before, 'the running backup’s file is untouched')
  }
  holder.exec('ROLLBACK')
  holder.close()

  const cutShort = await run(['backup', copy, '--force'], { TRACER_DB: path })
  t.equal(cutShort.status, 0, `once nothing writes it, --force replaces the partial file a backup left: ${cutShort.stderr}`)
})

t.test('the copy is readable and writable by its owner only, whatever the umask', async (t) => {
  const { folder, path } = await liveStore(t)
  const copy = join(folder, 'copy.sqlite')
  const umask = process.umask(0o022)
  t.teardown(() => process.umask(umask))
  const result = await run(['backup', copy], { TRACER_DB: path })
  t.equal(result.status, 0, result.stderr)
  t.equal(statSync(copy).mode & 0o777, 0o600, 'the copy holds password hashes: 0600')
  process.umask(0o000)
  const again = await run(['backup', copy, '--force'], { TRACER_DB: path })
  t.equal(again.status, 0, again.stderr)
  t.equal(statSync(copy).mode & 0o777, 0o600, 'with umask 000 too')
})
