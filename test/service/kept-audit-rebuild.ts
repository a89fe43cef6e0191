import { openKeptDatabase } from '../../src/store/sqlite/native-lifetimes.js'
import { dirname, join } from 'node:path'
import t, { type Test } from 'tap'
import { buildApp } from '../../src/app.js'
import type { Config } from '../../src/config.js'
import { seedDemo } from '../../src/demo/generate.js'
import { DEFAULT_STAGE_DEADLINES, parseStageDeadlines } from '../../src/domain/stage-deadlines.js'
import { openSqliteStore } from '../../src/store/sqlite/store.js'
import { testConfig, userWithTokens } from '../helper.js'

/*
 * Issue 29, finding 5: an instance that must make its kept audit again serves while it does. /ready
 * says how far it has come, reads of the audit wait (503, never a verdict of a half-made audit), and
 * everything else is served; once it is made, the audit reads as one made from the start.
 */

const NOW = Date.UTC(2026, 2, 1, 12)
const WINDOW = `start_time_utc=${new Date(NOW - 12 * 86_400_000).toISOString()}&end_time_utc=${new Date(NOW).toISOString()}`

/** The app on a store of demo events kept under the default deadlines, started with shorter ones: its batches run when the test steps them. */
async function rebuildingApp(t: Test) {
  const config = testConfig(t, { STAGE_DEADLINES: 'data_registration=6h,baseband_conversion=2h' })
  const old = openSqliteStore(config.TRACER_DB, config.TRACER_SITES, { deadlines: parseStageDeadlines(DEFAULT_STAGE_DEADLINES), now: () => NOW })
  await seedDemo(old, config.TRACER_SITES, { events: 400, days: 10, seed: 3, now: NOW })
  await old.close()
  const steps: (() => void)[] = []
  const store = openSqliteStore(config.TRACER_DB, config.TRACER_SITES, {
    deadlines: config.STAGE_DEADLINES,
    now: () => NOW,
    rebuild: 'while-serving',
    rebuildBatch: 5,
    rebuildPace: (next) => steps.push(next)
  })
  const app = await buildApp({ config, store, now: () => NOW })
  t.teardown(() => app.close())
  return { app, config, steps }
}

/** The same records with no kept audit: the app on it makes the audit from the start. */
async function fromTheStart(t: Test, config: Config) {
  const path = join(dirname(config.TRACER_DB), 'reference.sqlite')
  // A copy of what is committed, the WAL included, while the app holds the file open.
  const source = openKeptDatabase(config.TRACER_DB, { readonly: true })
  source.exec(`VACUUM INTO '${path}'`)
  source.close()
  const db = openKeptDatabase(path)
  db.exec(`DELETE FROM audits; DELETE FROM settings WHERE name LIKE 'kept_audit%'`)
  db.close()
  const reference = { ...config, TRACER_DB: path }
  const store = openSqliteStore(path, config.TRACER_SITES, { deadlines: config.STAGE_DEADLINES, now: () => NOW })
  const app = await buildApp({ config: reference, store, now: () => NOW })
  t.teardown(() => app.close())
  return app
}

t.test('while the kept audit is made again: live, not ready with its progress, the audit waits, the rest is served', async (t) => {
  const { app, config, steps } = await rebuildingApp(t)
  const { access_token: reader } = await userWithTokens(app, 'reader')
  const { access_token: writer } = await userWithTokens(app, 'writer', 'writer')
  const auth = { authorization: reader }

  t.equal((await app.inject({ url: '/health' })).statusCode, 200)
  const ready = await app.inject({ url: '/ready' })
  t.equal(ready.statusCode, 503)
  t.equal(ready.headers['retry-after'], '5')
  t.match(ready.json(), { exception: 'ServiceUnavailable', reasons: [/^The kept audit is being made again .*: 5 of [\d,]+ events done; try again shortly\.$/] })
  steps.shift()!()
  t.match((await app.inject({ url: '/ready' })).json(), { reasons: [/: 10 of [\d,]+ events done/] }, 'the progress moves with each batch')

  for (const url of [`/v1/event-tracer/audit?${WINDOW}`, '/v1/event-tracer/audit/1', '/v1/event-tracer/stream?verdicts=true']) {
    const refused = await app.inject({ url, headers: auth })
    t.equal(refused.statusCode, 503, url)
    t.ok(refused.headers['retry-after'], `${url}: Retry-After`)
    t.match(refused.json(), { exception: 'ServiceUnavailable', reasons: [/kept audit is being made again/] }, `${url}: the envelope`)
  }
  const metrics = await app.inject({ url: '/metrics' })
  t.equal(metrics.statusCode, 200, '/metrics is served')
  t.match(metrics.body, /tracer_audit_computed_timestamp_seconds 0/, 'its audit gauges wait for the audit')

  const write = await app.inject({
    method: 'POST',
    url: '/v1/event-tracer/update-trace',
    headers: { authorization: writer },
    payload: { event: 399, site: 'chime', stage: 'data_registration', status: 'complete' }
  })
  t.equal(write.statusCode, 200, 'a write is served')
  t.equal((await app.inject({ url: '/v1/events/399', headers: auth })).statusCode, 200, 'a read of records is served')
  t.equal((await app.inject({ url: `/v1/event-tracer/baseband-callbacks?${WINDOW}`, headers: auth })).statusCode, 200)

  while (steps.length > 0) steps.shift()!()
  await app.store.keptAudit.made
  t.equal((await app.inject({ url: '/ready' })).statusCode, 200, 'ready once it is made')
  const audit = await app.inject({ url: `/v1/event-tracer/audit?${WINDOW}`, headers: auth })
  t.equal(audit.statusCode, 200)

  const reference = await fromTheStart(t, config)
  // The copy holds the same users, and its app the same secret.
  const expected = await reference.inject({ url: `/v1/event-tracer/audit?${WINDOW}`, headers: auth })
  t.ok(expected.json<{ events: unknown[] }>().events.length > 0, 'the window has audited events')
  t.same(audit.json(), expected.json(), 'the audit reads as one made from the start, the write made meanwhile included')
})
