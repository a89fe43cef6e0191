import Database from 'better-sqlite3'
import { join } from 'node:path'
import t from 'tap'
import { StoreUnavailableError } from '../../src/store/port.js'
import { SqliteStore } from '../../src/store/sqlite/store.js'
import { storeConformance } from './conformance.js'
import { tracerConformance } from './tracer-conformance.js'

const openFresh = async (t: Parameters<typeof storeConformance>[0]) => {
  const store = SqliteStore.open(join(t.testdir(), 'tracer.sqlite'))
  t.teardown(() => store.close())
  return store
}

t.test('the SQLite adapter passes the store conformance suite', async (t) => {
  storeConformance(t, openFresh)
  tracerConformance(t, openFresh)
})

t.test('the file is created with its folder, in WAL mode, at the current schema version', async (t) => {
  const path = join(t.testdir(), 'nested', 'folder', 'tracer.sqlite')
  const store = SqliteStore.open(path)
  await store.close()
  const db = new Database(path, { readonly: true })
  t.teardown(() => db.close())
  t.equal(db.pragma('journal_mode', { simple: true }), 'wal')
  t.ok((db.pragma('user_version', { simple: true }) as number) >= 1)
})

t.test('reopening keeps the data and does not migrate twice', async (t) => {
  const path = join(t.testdir(), 'tracer.sqlite')
  const first = SqliteStore.open(path)
  await first.createUser({ name: 'ana', passwordHash: 'h', role: 'reader', createdAt: 1 })
  await first.close()
  const second = SqliteStore.open(path)
  t.teardown(() => second.close())
  t.equal((await second.findUser('ana'))?.name, 'ana')
})

t.test('a store written by a newer version is refused, not damaged', async (t) => {
  const path = join(t.testdir(), 'tracer.sqlite')
  const db = new Database(path)
  db.pragma('user_version = 999')
  db.close()
  t.throws(() => SqliteStore.open(path), /schema is version 999, newer than this service knows/)
})

t.test('two connections to one file see each other’s writes (several processes share a file)', async (t) => {
  const path = join(t.testdir(), 'tracer.sqlite')
  const a = SqliteStore.open(path)
  const b = SqliteStore.open(path)
  t.teardown(async () => {
    await a.close()
    await b.close()
  })
  await a.createUser({ name: 'ana', passwordHash: 'h', role: 'reader', createdAt: 1 })
  t.equal((await b.findUser('ana'))?.name, 'ana')
  await b.saveRefreshToken('ana', 'f'.repeat(64), 2)
  t.equal((await a.findUser('ana'))?.refreshTokenHash, 'f'.repeat(64))
})

t.test('a closed store rejects with StoreUnavailableError', async (t) => {
  const store = SqliteStore.open(join(t.testdir(), 'tracer.sqlite'))
  await store.close()
  await t.rejects(store.ping(), StoreUnavailableError)
  await t.rejects(store.findUser('ana'), StoreUnavailableError)
})
