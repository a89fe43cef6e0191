import { statSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { loadConfig } from '../../src/config.js'
import { resolveJwtSecret } from '../../src/secret.js'
import { openSqliteStore } from '../../src/store/sqlite/store.js'
import { defaultSites } from '../sites.js'

/** Runs `work` with the common umask 022, which leaves the files it creates readable by everyone. */
function withUmask022<T>(work: () => T): T {
  const before = process.umask(0o022)
  try {
    return work()
  } finally {
    process.umask(before)
  }
}

const modeOf = (path: string) => statSync(path).mode & 0o777

t.test('a new SQLite store, its WAL and its shared-memory file are 0600 with umask 022', async (t) => {
  const path = join(t.testdir(), 'data', 'tracer.sqlite')
  const store = withUmask022(() => openSqliteStore(path, defaultSites))
  t.teardown(() => store.close())
  // A committed write makes sure the WAL is there.
  t.ok(await store.users.create({ name: 'ana', role: 'admin', password_hash: 'hash', created_at: 0 }))
  for (const file of [path, `${path}-wal`, `${path}-shm`]) t.equal(modeOf(file).toString(8), '600', file)
})

t.test('the generated JWT secret is 0600 with umask 022', async (t) => {
  const TRACER_DB = join(t.testdir(), 'tracer.sqlite')
  const { generatedFile } = withUmask022(() => resolveJwtSecret(loadConfig({ TRACER_DB })))
  t.equal(modeOf(generatedFile!).toString(8), '600')
})
