import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { migrations } from '../../src/store/sqlite/migrations.js'
import { openKeptDatabase } from '../../src/store/sqlite/native-lifetimes.js'
import { run } from './run.js'

/*
 * Issue 40, point 7: the commands that only read (`audit` without --recompute, `users list`) never
 * upgrade a store an older release wrote (an upgrade may rebuild indexes over every transition
 * under that release's instances): they refuse in one line, naming both schema versions and what
 * to do, and leave the file as it was.
 */

/** The migrations of 53fdc3f, the release before the bounded read. */
const MIGRATIONS_OF_53FDC3F = 8

/** A store as 53fdc3f left it, in WAL mode as every release keeps it, with a user and an event another program wrote. */
function olderStore(path: string): void {
  const db = openKeptDatabase(path)
  db.pragma('journal_mode = WAL')
  for (const sql of migrations.slice(0, MIGRATIONS_OF_53FDC3F)) db.exec(sql)
  db.pragma(`user_version = ${MIGRATIONS_OF_53FDC3F}`)
  db.prepare(`INSERT INTO users (name, password_hash, role, created_at) VALUES ('ana', 'h', 'reader', 1)`).run()
  db.prepare(
    `INSERT INTO events (event_no, timestamp_ms, snr, dm, known_source_name, tsar_classification, actions, baseband_requested, update_timestamp)
     VALUES (1, ?, 12, NULL, 'EXT', NULL, '{"want":{"baseband":true},"got":{}}', 1, 1)`
  ).run(Date.now() - 86_400_000)
  db.close()
}

const fileDigest = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex')

function schemaVersion(path: string): number {
  const db = openKeptDatabase(path, { readonly: true })
  try {
    return db.pragma('user_version', { simple: true }) as number
  } finally {
    db.close()
  }
}

t.test('audit and users list refuse a store older than this release in one line, and leave it as it was', async (t) => {
  const path = join(t.testdir(), 'tracer.sqlite')
  olderStore(path)
  const before = fileDigest(path)
  const refusal = new RegExp(
    `^tracer: The store at ${path.replaceAll('/', '\\/').replaceAll('.', '\\.')} has schema version ${MIGRATIONS_OF_53FDC3F}, older than this release's \\(${migrations.length}\\), and a command that only reads does not upgrade it: start this release with \`tracer serve\` on it once \\(it upgrades the store\\), then run the command again\\.\\n$`
  )

  for (const args of [['users', 'list', '--json'], ['audit', '--format', 'json'], ['audit', '--format', 'table', '--since', '3d']]) {
    const result = await run(args, { TRACER_DB: path })
    t.equal(result.status, 1, `${args.join(' ')}: exits 1`)
    t.equal(result.stdout, '', 'prints no verdict and no user')
    t.match(result.stderr, refusal, 'one line naming both versions and what to do')
  }
  t.equal(schemaVersion(path), MIGRATIONS_OF_53FDC3F, 'the schema was not upgraded')
  t.equal(fileDigest(path), before, 'the file is as it was')

  // What the line says to do: a writing start upgrades it; the commands then read it.
  const upgraded = await run(['audit', '--recompute', '--format', 'json', '--since', '3d'], { TRACER_DB: path })
  t.match(upgraded.status, /^[014]$/, upgraded.stderr)
  t.equal(schemaVersion(path), migrations.length, 'a command that writes upgrades it')
  const users = await run(['users', 'list', '--json'], { TRACER_DB: path })
  t.equal(users.status, 0, users.stderr)
  t.match(JSON.parse(users.stdout), [{ name: 'ana', role: 'reader' }])
})
