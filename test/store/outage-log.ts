import type Database from 'better-sqlite3'
import t, { type Test } from 'tap'
import { buildApp } from '../../src/app.js'
import { openKeptDatabase } from '../../src/store/sqlite/native-lifetimes.js'
import { openSqliteStore } from '../../src/store/sqlite/store.js'
import { addUser, testConfig, userWithTokens } from '../helper.js'
import { defaultSites } from '../sites.js'

type LogLine = { level: number; msg: string; reqId?: string; [key: string]: unknown }

/** An app on a store the test can fill up (as a full disk does), logging every line at info into `lines`. */
async function fillableApp(t: Test) {
  // No wait for another process's lock: the test holds one, and every refused write would wait.
  const config = testConfig(t, { LOG_LEVEL: 'info', SQLITE_BUSY_TIMEOUT_MS: '0' })
  let connection: Database.Database | undefined
  const createDatabase = (path: string) => (connection = openKeptDatabase(path))
  const lines: LogLine[] = []
  const app = await buildApp({
    config,
    store: openSqliteStore(config.TRACER_DB, defaultSites, { createDatabase, busyTimeoutMs: config.SQLITE_BUSY_TIMEOUT_MS }),
    logStream: { write: (line) => lines.push(JSON.parse(line) as LogLine) }
  })
  t.teardown(() => app.close())
  const db = connection!
  const unlimited = db.pragma('max_page_count', { simple: true }) as number
  const fill = () => {
    db.exec('VACUUM')
    db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`)
  }
  const makeRoom = () => db.pragma(`max_page_count = ${unlimited}`)
  /** Another process holds the write lock, as a stuck writer or a backup tool would; the returned function lets go. */
  const lock = () => {
    const other = openKeptDatabase(config.TRACER_DB)
    other.exec('BEGIN IMMEDIATE')
    return () => {
      other.exec('ROLLBACK')
      other.close()
    }
  }
  return { app, lines, fill, makeRoom, lock }
}

const events = (first: number) =>
  Array.from({ length: 200 }, (_, i) => ({ event_no: first + i, timestamp_utc: '2024-05-01T10:00:00Z', snr: 10, known_source_name: 'EXT' }))

t.test('a store outage is logged once when it begins and once when it ends, not once per refused request', async (t) => {
  const { app, lines, fill, lock } = await fillableApp(t)
  const { access_token, refresh_token } = await userWithTokens(app, 'pipeline', 'writer')
  await addUser(app, 'ana', 'her password')
  lines.length = 0
  const unlock = lock()
  const statuses = new Set<number>()
  for (let i = 0; i < 100; i++) {
    const write = await app.inject({ method: 'POST', url: '/v1/events', headers: { authorization: access_token }, payload: events(1 + i * 200) })
    statuses.add(write.statusCode)
    t.equal(write.headers['retry-after'], '5', 'each 503 says when to try again')
  }
  for (let i = 0; i < 50; i++) statuses.add((await app.inject({ url: '/ready' })).statusCode)
  t.strictSame([...statuses], [503], 'every write and every readiness probe refused')

  // A login stores its refresh token, so it waits for the store like any write; what needs no write goes on.
  const login = await app.inject({ method: 'POST', url: '/auth', payload: { username: 'ana', password: 'her password' } })
  t.equal(login.statusCode, 503)
  t.strictSame(login.json(), { reasons: ['The store is unavailable; try again shortly.'], exception: 'ServiceUnavailable' })
  t.equal(login.headers['retry-after'], '5')
  t.equal((await app.inject({ url: '/auth/verify', headers: { authorization: access_token } })).statusCode, 200, 'verify needs no store')
  const refresh = await app.inject({ method: 'POST', url: '/auth/refresh', headers: { authorization: access_token }, payload: { refresh_token } })
  t.equal(refresh.statusCode, 200, 'a refresh only reads')
  t.equal((await app.inject({ url: '/v1/events/1', headers: { authorization: access_token } })).statusCode, 404, 'reads go on')

  t.strictSame(
    lines.map(({ level, msg }) => ({ level, msg })),
    [{ level: 50, msg: 'the store is unavailable: what needs it is answered 503 until it is back (its return is logged)' }],
    'one line for the whole outage'
  )
  t.match(lines[0], { operation: 'events.upsert', reason: /SQLITE_BUSY/ })
  t.notOk(JSON.stringify(lines[0]).includes('"stack"'), 'no stack: the reason says it')

  unlock()
  t.equal((await app.inject({ url: '/ready' })).statusCode, 200)
  t.equal(lines.length, 2)
  // 100 writes, 50 readiness probes and one login: what clients asked for, not the service's own probes.
  t.match(lines[1], { level: 30, msg: /^the store is available again, after [\d.]+ s$/, outageSeconds: Number, refusedOperations: 151 })
  t.equal((await app.inject({ method: 'POST', url: '/auth', payload: { username: 'ana', password: 'her password' } })).statusCode, 200, 'logins work again')

  fill()
  for (let i = 0; i < 10; i++) await app.inject({ method: 'POST', url: '/v1/events', headers: { authorization: access_token }, payload: events(30_001 + i * 200) })
  t.equal(lines.filter((line) => line.level === 50).length, 2, 'a second outage (a full disk now) is a second line')
  t.match(lines[2], { operation: 'events.upsert', reason: /SQLITE_FULL/ })
})

t.test('without a readiness probe, the end of an outage is found by a probe the next successful operation starts', async (t) => {
  const { app, lines, fill, makeRoom } = await fillableApp(t)
  const { access_token } = await userWithTokens(app, 'pipeline', 'writer')
  lines.length = 0
  fill()
  t.equal((await app.inject({ method: 'POST', url: '/v1/events', headers: { authorization: access_token }, payload: events(1) })).statusCode, 503)
  makeRoom()
  const ended = new Promise<void>((resolve) => {
    const check = setInterval(() => lines.length >= 2 && (clearInterval(check), resolve()), 5)
  })
  t.equal((await app.inject({ url: '/v1/events/1', headers: { authorization: access_token } })).statusCode, 404)
  await ended
  t.match(lines, [{ level: 50 }, { level: 30, msg: /^the store is available again/, refusedOperations: 1 }])
})
