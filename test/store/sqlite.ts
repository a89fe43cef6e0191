import Database from 'better-sqlite3'
import { join } from 'node:path'
import t from 'tap'
import { StoreUnavailableError } from '../../src/store/port.js'
import { openSqliteStore } from '../../src/store/sqlite/store.js'
import { storeConformance, type OpenStore } from './conformance.js'
import { historyConformance } from './history-conformance.js'
import { tracerConformance } from './tracer-conformance.js'
import { defaultSites } from '../sites.js'

const openFresh: OpenStore = async (t, sites) => {
  const store = openSqliteStore(join(t.testdir(), 'tracer.sqlite'), sites ?? defaultSites)
  t.teardown(() => store.close())
  return store
}

t.test('the SQLite adapter passes the store conformance suite', async (t) => {
  storeConformance(t, openFresh)
  tracerConformance(t, openFresh)
  historyConformance(t, openFresh)
})

t.test('the file is created with its folder, in WAL mode, at the current schema version', async (t) => {
  const path = join(t.testdir(), 'nested', 'folder', 'tracer.sqlite')
  const store = openSqliteStore(path, defaultSites)
  await store.close()
  const db = new Database(path, { readonly: true })
  t.teardown(() => db.close())
  t.equal(db.pragma('journal_mode', { simple: true }), 'wal')
  t.ok((db.pragma('user_version', { simple: true }) as number) >= 1)
})

t.test('reopening keeps the data and does not migrate twice', async (t) => {
  const path = join(t.testdir(), 'tracer.sqlite')
  const first = openSqliteStore(path, defaultSites)
  await first.users.create({ name: 'ana', password_hash: 'h', role: 'reader', created_at: 1 })
  await first.close()
  const second = openSqliteStore(path, defaultSites)
  t.teardown(() => second.close())
  t.equal((await second.users.find('ana'))?.name, 'ana')
})

t.test('a store written by a newer version is refused, not damaged', async (t) => {
  const path = join(t.testdir(), 'tracer.sqlite')
  const db = new Database(path)
  db.pragma('user_version = 999')
  db.close()
  t.throws(() => openSqliteStore(path, defaultSites), /schema is version 999, newer than this service knows/)
})

t.test('two connections to one file see each other’s writes (several processes share a file)', async (t) => {
  const path = join(t.testdir(), 'tracer.sqlite')
  const a = openSqliteStore(path, defaultSites)
  const b = openSqliteStore(path, defaultSites)
  t.teardown(async () => {
    await a.close()
    await b.close()
  })
  await a.users.create({ name: 'ana', password_hash: 'h', role: 'reader', created_at: 1 })
  t.equal((await b.users.find('ana'))?.name, 'ana')
  await b.users.saveRefreshToken('ana', 'f'.repeat(64), 2)
  t.equal((await a.users.find('ana'))?.refresh_token_hash, 'f'.repeat(64))
})

t.test('a closed store rejects with StoreUnavailableError', async (t) => {
  const store = openSqliteStore(join(t.testdir(), 'tracer.sqlite'), defaultSites)
  await store.close()
  await t.rejects(store.ping(), StoreUnavailableError)
  await t.rejects(store.users.find('ana'), StoreUnavailableError)
})
