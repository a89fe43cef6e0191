import type Database from 'better-sqlite3'
import { openKeptDatabase } from '../../src/store/sqlite/native-lifetimes.js'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { buildApp } from '../../src/app.js'
import { StoreUnavailableError } from '../../src/store/port.js'
import { openSqliteStore, REOPEN_INTERVAL_MS } from '../../src/store/sqlite/store.js'
import { build, claims, signJwt, testConfig, userWithTokens } from '../helper.js'
import { defaultSites } from '../sites.js'

const UNAVAILABLE = { reasons: ['The store is unavailable; try again shortly.'], exception: 'ServiceUnavailable' }

t.test('a store locked by another process: 503 envelope and /ready 503, then recovery by itself', async (t) => {
  const app = await build(t, { SQLITE_BUSY_TIMEOUT_MS: '100' })
  const { access_token } = await userWithTokens(app, 'pipeline', 'writer')
  const write = () =>
    app.inject({
      method: 'POST',
      url: '/v1/event-tracer/create-trace',
      headers: { authorization: access_token },
      payload: { event: 1, site: 'chime' }
    })
  t.equal((await app.inject({ url: '/ready' })).statusCode, 200)

  // Another process holds the write lock, as a stuck writer or a backup tool would.
  const other = openKeptDatabase(app.config.TRACER_DB)
  other.exec('BEGIN IMMEDIATE')

  const ready = await app.inject({ url: '/ready' })
  t.equal(ready.statusCode, 503)
  t.strictSame(ready.json(), { reasons: ['The store is unavailable; try again shortly.'], exception: 'ServiceUnavailable' })
  const refused = await write()
  t.equal(refused.statusCode, 503)
  t.equal(refused.json().exception, 'ServiceUnavailable')
  const read = await app.inject({ url: '/v1/events/1', headers: { authorization: access_token } })
  t.equal(read.statusCode, 404, 'reads go on: WAL readers do not wait for the writer')

  other.exec('ROLLBACK')
  other.close()
  t.equal((await app.inject({ url: '/ready' })).statusCode, 200, 'ready again without a restart')
  t.equal((await write()).statusCode, 200)
  t.not(await app.store.traces.find(1), null)
})

t.test('a write that meets another process’s lock waits off the event loop: /health, reads and other work go on, and it lands once the lock is given back', async (t) => {
  // A budget no run of this test reaches: the write must wait for the lock, not time out.
  const app = await build(t, { SQLITE_BUSY_TIMEOUT_MS: '600000' })
  const { access_token } = await userWithTokens(app, 'pipeline', 'writer')
  const other = openKeptDatabase(app.config.TRACER_DB)
  t.teardown(() => other.close())
  other.exec('BEGIN IMMEDIATE')

  let landed = false
  const writes = [1, 2, 3].map((event) =>
    app
      .inject({ method: 'POST', url: '/v1/event-tracer/create-trace', headers: { authorization: access_token }, payload: { event, site: 'chime' } })
      .finally(() => (landed = true))
  )
  // Were the writes waiting on the event loop (SQLite's own busy wait), nothing below would be
  // answered before they settled.
  for (let probe = 0; probe < 20; probe++) {
    t.equal((await app.inject({ url: '/health' })).statusCode, 200)
    t.equal((await app.inject({ url: '/v1/events/1', headers: { authorization: access_token } })).statusCode, 404)
  }
  t.equal((await app.inject({ url: '/ready' })).statusCode, 503, 'not ready to write, said at once')
  t.notOk(landed, 'the writes still wait for the lock, having let 40 requests through')

  other.exec('ROLLBACK')
  t.strictSame((await Promise.all(writes)).map((response) => response.statusCode), [200, 200, 200], 'each lands once the lock is free')
  for (const event of [1, 2, 3]) t.not(await app.store.traces.find(event), null)
})

t.test('a write locked out past SQLITE_BUSY_TIMEOUT_MS answers 503 with Retry-After, having waited between tries', async (t) => {
  const app = await build(t, { SQLITE_BUSY_TIMEOUT_MS: '200' })
  const { access_token } = await userWithTokens(app, 'pipeline', 'writer')
  const other = openKeptDatabase(app.config.TRACER_DB)
  t.teardown(() => other.close())
  other.exec('BEGIN IMMEDIATE')
  let answered = false
  const write = app
    .inject({ method: 'POST', url: '/v1/event-tracer/create-trace', headers: { authorization: access_token }, payload: { event: 1, site: 'chime' } })
    .finally(() => (answered = true))
  t.equal((await app.inject({ url: '/health' })).statusCode, 200)
  t.notOk(answered, '/health answered while the write waited')
  const refused = await write
  t.equal(refused.statusCode, 503)
  t.strictSame(refused.json(), UNAVAILABLE)
  t.ok(Number(refused.headers['retry-after']) > 0, 'with Retry-After')
  other.exec('ROLLBACK')
  t.equal(await app.store.traces.find(1), null, 'nothing was written')
})

t.test('a connection SQLite opened read-only: 503 while the file may not be written, then a reopen by itself', async (t) => {
  const config = testConfig(t)
  const setup = openSqliteStore(config.TRACER_DB, defaultSites)
  await setup.users.create({ name: 'pipeline', role: 'writer', password_hash: 'unused', created_at: 1 })
  await setup.close()
  // SQLite opens a file the process may not write read-only, without an error; this opener does
  // the same while `writable` is false (test/process/store-away.test.ts shows the real thing).
  let writable = false
  let opened = 0
  let now = 0
  const createDatabase = (path: string) => {
    opened++
    return openKeptDatabase(path, { readonly: !writable })
  }
  const app = await buildApp({ config, store: openSqliteStore(config.TRACER_DB, defaultSites, { createDatabase, now: () => now }) })
  t.teardown(() => app.close())
  const token = signJwt(claims('pipeline'))
  const write = (event: number) =>
    app.inject({ method: 'POST', url: '/v1/event-tracer/create-trace', headers: { authorization: token }, payload: { event, site: 'chime' } })

  const ready = await app.inject({ url: '/ready' })
  t.equal(ready.statusCode, 503)
  t.strictSame(ready.json(), UNAVAILABLE)
  t.strictSame((await write(1)).json(), UNAVAILABLE)
  t.equal((await app.inject({ url: '/v1/events/1', headers: { authorization: token } })).statusCode, 404, 'reads go on')
  t.equal(opened, 2, 'one reopen at once, which found the file as unwritable as before')

  writable = true
  t.equal((await app.inject({ url: '/ready' })).statusCode, 503, 'the next reopen waits its turn')
  t.equal(opened, 2, 'so a broken file is not hammered')
  now += REOPEN_INTERVAL_MS
  t.strictSame((await app.inject({ url: '/ready' })).json(), { status: 'ok' }, 'ready again without a restart')
  t.equal(opened, 3)
  t.equal((await write(2)).statusCode, 200)
  t.not(await app.store.traces.find(2), null)
  t.equal((await app.store.users.find('pipeline'))?.role, 'writer', 'what was committed before is all there')
})

t.test('a full database (as PRAGMA max_page_count makes it, exactly as a full disk does): 503 until there is room again', async (t) => {
  const config = testConfig(t)
  let connection: Database.Database | undefined
  const createDatabase = (path: string) => (connection = openKeptDatabase(path))
  const app = await buildApp({ config, store: openSqliteStore(config.TRACER_DB, defaultSites, { createDatabase }) })
  t.teardown(() => app.close())
  const { access_token } = await userWithTokens(app, 'pipeline', 'writer')
  const events = (first: number) =>
    Array.from({ length: 200 }, (_, i) => ({ event_no: first + i, timestamp_utc: '2024-05-01T10:00:00Z', snr: 10, known_source_name: 'EXT' }))
  const write = (first: number) =>
    app.inject({ method: 'POST', url: '/v1/events', headers: { authorization: access_token }, payload: events(first) })

  // The disk fills up: no free page left in the file, and no room to grow it.
  const db = connection!
  const unlimited = db.pragma('max_page_count', { simple: true }) as number
  db.exec('VACUUM')
  db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`)
  t.strictSame((await write(1)).json(), UNAVAILABLE, 'a write that needs room is refused')
  const ready = await app.inject({ url: '/ready' })
  t.equal(ready.statusCode, 503)
  t.strictSame(ready.json(), UNAVAILABLE)

  db.pragma(`max_page_count = ${unlimited}`)
  t.strictSame((await app.inject({ url: '/ready' })).json(), { status: 'ok' }, 'ready again without a restart')
  t.strictSame((await write(1)).json(), { upserted: 200 })
  t.equal((await app.store.users.find('pipeline'))?.role, 'writer', 'what was committed before is all there')
})

t.test('a readiness probe of a healthy store writes nothing to disk', async (t) => {
  const app = await build(t)
  const wal = `${app.config.TRACER_DB}-wal`
  t.equal((await app.inject({ url: '/ready' })).statusCode, 200)
  const before = statSync(wal)
  for (let i = 0; i < 20; i++) t.equal((await app.inject({ url: '/ready' })).statusCode, 200)
  const after = statSync(wal)
  t.equal(after.size, before.size)
  t.equal(after.mtimeMs, before.mtimeMs)
})

t.test('a real full disk: a small tmpfs, where this test may mount one (root with CAP_SYS_ADMIN)', async (t) => {
  const folder = mkdtempSync(join(tmpdir(), 'tracer-full-disk-'))
  t.teardown(() => rmSync(folder, { recursive: true, force: true }))
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=512k', 'tmpfs', folder], { stdio: 'ignore' })
  } catch {
    t.plan(0, 'mounting a tmpfs is not allowed here; the max_page_count test stands in for it')
    return
  }
  t.teardown(() => execFileSync('umount', [folder]))
  const config = testConfig(t, { TRACER_DB: join(folder, 'tracer.sqlite') })
  const app = await buildApp({ config, store: openSqliteStore(config.TRACER_DB, defaultSites) })
  t.teardown(() => app.close())
  const { access_token } = await userWithTokens(app, 'pipeline', 'writer')
  const write = (batch: number) =>
    app.inject({
      method: 'POST',
      url: '/v1/events',
      headers: { authorization: access_token },
      payload: Array.from({ length: 50 }, (_, i) => ({
        event_no: batch * 50 + i,
        timestamp_utc: '2024-05-01T10:00:00Z',
        snr: 10,
        known_source_name: 'X'.repeat(200)
      }))
    })

  // Another program fills the disk. Only a commit meets it: the first write that needs room.
  try {
    writeFileSync(join(folder, 'filler'), Buffer.alloc(1024 * 1024))
  } catch {
    // ENOSPC: the filler takes what there was.
  }
  let batch = 0
  let refused = await write(batch)
  while (refused.statusCode === 200 && batch < 100) refused = await write(++batch)
  t.strictSame(refused.json(), UNAVAILABLE, 'writes are refused')
  t.strictSame((await app.inject({ url: '/ready' })).json(), UNAVAILABLE, 'and /ready says so')

  rmSync(join(folder, 'filler'))
  t.strictSame((await app.inject({ url: '/ready' })).json(), { status: 'ok' }, 'ready again without a restart')
  t.strictSame((await write(batch)).json(), { upserted: 50 })
})

t.test('an in-memory store is never reopened: a new connection would find it empty', async (t) => {
  let connection: Database.Database | undefined
  let opened = 0
  const store = openSqliteStore(':memory:', defaultSites, { createDatabase: (path) => (opened++, (connection = openKeptDatabase(path))) })
  t.teardown(() => store.close())
  await store.users.create({ name: 'ana', password_hash: 'h', role: 'reader', created_at: 1 })
  // query_only refuses writes with SQLITE_READONLY, the error a reopen would otherwise answer.
  connection!.pragma('query_only = ON')
  await t.rejects(store.users.setRole('ana', 'admin'), StoreUnavailableError)
  t.equal((await store.users.find('ana'))?.role, 'reader', 'the data is still there')
  t.equal(opened, 1)
})

t.test('a start that SQLite answers SQLITE_BUSY at once tries again while a lock may be waited for, then gives up with 503', async (t) => {
  const path = join(t.testdir(), 'tracer.sqlite')
  const busy = () => Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' })
  let tries = 0
  // As another process making the file's WAL at the same moment would: busy at once, twice.
  const store = openSqliteStore(path, defaultSites, {
    createDatabase: (file) => {
      tries++
      if (tries <= 2) throw busy()
      return openKeptDatabase(file)
    }
  })
  t.teardown(() => store.close())
  t.equal(tries, 3, 'opened at the third try')
  await store.events.upsert([])
  t.throws(
    () =>
      openSqliteStore(join(t.testdir(), 'other.sqlite'), defaultSites, {
        busyTimeoutMs: 200,
        createDatabase: () => {
          throw busy()
        }
      }),
    StoreUnavailableError,
    'busy for longer than a lock is waited for: the start fails, as one that cannot serve'
  )
})
