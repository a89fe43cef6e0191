import { once } from 'node:events'
import { chmodSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { openSqliteStore } from '../../src/store/sqlite/store.js'
import { TEST_SECRET } from '../helper.js'
import { end, spawnOwned } from '../owned-processes.js'
import { defaultSites } from '../sites.js'
import { runCli, type CliResult, type RunAs } from './processes.js'

/* A start that cannot serve stops with status 1 and one line on standard error, single or with workers, and writes nothing first. */

const WORKERS = ['1', '2']

async function occupiedPort(t: Test): Promise<number> {
  const blocker = createServer().listen(0, '127.0.0.1')
  await once(blocker, 'listening')
  t.teardown(() => void blocker.close())
  return (blocker.address() as { port: number }).port
}

t.test('a start that cannot listen writes nothing: no store, no demo data, no generated secret, not even the folder', async (t) => {
  const port = await occupiedPort(t)
  for (const workers of WORKERS) {
    const folder = join(t.testdir(), `new-${workers}`)
    const result = await runCli(['serve'], { TRACER_DB: join(folder, 'tracer.sqlite'), PORT: String(port), WORKERS: workers })
    t.equal(result.status, 1, `WORKERS=${workers}`)
    t.equal(result.stderr, `tracer: cannot listen on 127.0.0.1:${port}: another process listens on that port already (EADDRINUSE)\n`)
    t.equal(result.stdout, '', 'no admin created, nothing seeded, no worker started')
    t.equal(existsSync(folder), false, 'nothing written')
  }
})

/** `tracer serve` as `runAs` (the test's own user when undefined), to its exit. */
async function serveAs(env: Record<string, string>, runAs: RunAs | undefined): Promise<CliResult> {
  const serve = [process.execPath, 'dist/src/cli.js', 'serve']
  // As another user, without tap's process-info hook: it writes under .tap at exit, which that user may not, onto stderr.
  const [command, ...args] = runAs === undefined ? serve : ['env', '-u', 'NODE_OPTIONS', ...serve]
  const child = spawnOwned(command!, args, {
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...runAs
  })
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (chunk) => (stdout += chunk))
  child.stderr!.on('data', (chunk) => (stderr += chunk))
  const [status] = (await once(child, 'exit')) as [number | null]
  await end(child)
  return { status, stdout, stderr }
}

/** Each start of `cases` stops with status 1 and exactly `line` on standard error, with one worker and with two. */
async function stopsWithOneLine(t: Test, cases: [string, Record<string, string>, string | RegExp][], runAs?: RunAs) {
  for (const [name, env, line] of cases) {
    for (const workers of WORKERS) {
      const result = await serveAs({ JWT_SECRET: TEST_SECRET, ...env, WORKERS: workers }, runAs)
      t.equal(result.status, 1, `${name}, WORKERS=${workers}`)
      t.match(result.stderr, /^tracer: [^\n]+\n$/, 'one line, no stack')
      if (typeof line === 'string') t.equal(result.stderr, line)
      else t.match(result.stderr, line)
    }
  }
}

t.test('a SQLite path that cannot hold a store: one line naming it and why', async (t) => {
  const folder = t.testdir()
  const notFolder = join(folder, 'a-file')
  writeFileSync(notFolder, 'text')
  const notStore = join(folder, 'notes.sqlite')
  writeFileSync(notStore, 'these are notes, not a database\n')
  const aFolder = join(folder, 'a-folder')
  mkdirSync(aFolder)
  await stopsWithOneLine(t, [
    ['a folder under a file', { TRACER_DB: join(notFolder, 'tracer.sqlite') },
      `tracer: cannot use the sqlite store at ${notFolder}/tracer.sqlite: cannot create the folder ${notFolder}: a part of that path is a file, not a folder (EEXIST)\n`],
    ['a file that is no store', { TRACER_DB: notStore }, `tracer: cannot use the sqlite store at ${notStore}: the file is not a SQLite database (SQLITE_NOTADB)\n`],
    ['a folder', { TRACER_DB: aFolder }, /^tracer: cannot use the sqlite store at .*a-folder: the file cannot be opened or created there .*\(SQLITE_CANTOPEN\)\n$/]
  ])
})

t.test('a folder or file the server may not write: one line, as every other bad start', async (t) => {
  // Root ignores file modes: the server then runs as nobody, whom they bind.
  const runAs = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : undefined
  const folder = t.testdir()
  // The test's folder is its user's alone: the server's user must reach the folders inside.
  chmodSync(folder, 0o755)
  const readOnly = join(folder, 'read-only')
  mkdirSync(readOnly)
  const store = join(readOnly, 'tracer.sqlite')
  await openSqliteStore(store, defaultSites).close()
  chmodSync(store, 0o666)
  for (const file of readdirSync(readOnly)) chmodSync(join(readOnly, file), 0o666)
  chmodSync(readOnly, 0o555)
  const writable = join(folder, 'writable')
  mkdirSync(writable)
  chmodSync(writable, 0o777)
  const readOnlyFile = join(writable, 'tracer.sqlite')
  writeFileSync(readOnlyFile, '')
  chmodSync(readOnlyFile, 0o444)

  await stopsWithOneLine(t, [
    ['a store in a read-only folder', { TRACER_DB: store },
      `tracer: cannot use the sqlite store at ${store}: its folder may not be written, and SQLite keeps its -wal and -shm files there (SQLITE_READONLY_DIRECTORY)\n`],
    // The store is created (private) before SQLite opens it: the refusal is the operating system's.
    ['a new store in a read-only folder', { TRACER_DB: join(readOnly, 'new.sqlite') },
      `tracer: cannot use the sqlite store at ${readOnly}/new.sqlite: cannot create or open a file in ${readOnly}: permission denied (EACCES)\n`],
    ['a folder it may not create', { TRACER_DB: join(readOnly, 'sub', 'tracer.sqlite') },
      `tracer: cannot use the sqlite store at ${readOnly}/sub/tracer.sqlite: cannot create the folder ${readOnly}/sub: permission denied (EACCES)\n`],
    ['a new store file it may not write', { TRACER_DB: readOnlyFile }, `tracer: cannot use the sqlite store at ${readOnlyFile}: the file may not be written (SQLITE_READONLY)\n`],
    ['no JWT_SECRET, and a folder where it cannot keep one', { TRACER_DB: store, JWT_SECRET: '' },
      `tracer: cannot keep a generated JWT secret: cannot create or open a file in ${readOnly}: permission denied (EACCES); set JWT_SECRET, or let this user write the folder\n`]
  ], runAs)
  t.strictSame(readdirSync(readOnly), ['tracer.sqlite'], 'nothing was written in the read-only folder')
  chmodSync(readOnly, 0o755)
})

t.test('a MongoDB connection string every worker refuses is said once', async (t) => {
  await stopsWithOneLine(t, [
    ['tls=maybe', { TRACER_STORE: 'mongodb', MONGODB_URL: 'mongodb://127.0.0.1:27017/?tls=maybe' },
      'tracer: cannot use the mongodb store: tls/ssl must be either "true" or "false"\n']
  ])
})
