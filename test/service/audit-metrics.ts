import t, { type Test } from 'tap'
import { buildApp } from '../../src/app.js'
import { toEventRecord } from '../../src/domain/events.js'
import { openStore } from '../../src/store/open.js'
import type { AuditCollection } from '../../src/kept-audit/keeper.js'
import type { Store } from '../../src/store/port.js'
import { testConfig, userWithTokens } from '../helper.js'

const NOW = Date.parse('2026-03-01T12:00:00Z')
const MINUTE = 60_000
const DAY = 24 * 60 * MINUTE

/** The store, counting the reads of the kept audit's window: the audit behind the gauges is the only reader besides the window routes. */
function countingWindowReads(store: Store) {
  const reads = { window: 0 }
  const audits: AuditCollection = {
    find: (eventNo) => store.audits.find(eventNo),
    due: (now, limit) => store.audits.due(now, limit),
    settle: (eventNos, now) => store.audits.settle(eventNos, now),
    check: (eventNos, now) => store.audits.check(eventNos, now),
    verify: (after, limit, now) => store.audits.verify(after, limit, now),
    size: () => store.audits.size(),
    marked: (limit) => store.audits.marked(limit),
    unmark: (upTo) => store.audits.unmark(upTo),
    windowPage: (window, after, limit) => {
      reads.window++
      return store.audits.windowPage(window, after, limit)
    }
  }
  return { store: { ...store, audits }, reads }
}

/** The app on that store, with a clock the test moves. */
async function metricsApp(t: Test) {
  const config = testConfig(t)
  const clock = { now: NOW }
  const { store, reads } = countingWindowReads(await openStore(config))
  const app = await buildApp({ config, store, now: () => clock.now })
  t.teardown(() => app.close())
  const event = (event_no: number, ago: number, want: Record<string, boolean>) =>
    toEventRecord({ event_no, timestamp_utc: new Date(NOW - ago).toISOString(), snr: 10, known_source_name: 'EXT', actions: { want, got: {} } }, config.TRACER_SITES, 1)
  const scrape = async () => {
    const response = await app.inject({ url: '/metrics' })
    t.equal(response.statusCode, 200)
    return response.body
  }
  return { app, clock, reads, event, scrape }
}

/** The value of one series in Prometheus text, or undefined when it is not there. */
function value(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

t.test('/metrics: the last 7 days’ audit as gauges, events by verdict and stuck stages by site and stage', async (t) => {
  const { app, event, scrape } = await metricsApp(t)
  await app.store.events.upsert([
    event(1, 10 * MINUTE, { baseband: true }),
    event(2, 20 * MINUTE, { baseband: true, kko_baseband: true }),
    event(3, 2 * DAY, { kko_baseband: true }),
    event(4, 8 * DAY, { gbo_baseband: true }),
    event(5, DAY, { intensity: true })
  ])
  await app.store.traces.upsert([{ event_no: 3, 'stages/tsar_classification': 'complete', 'stages/baseband_conversion/sites/kko': 'complete' }])

  const text = await scrape()
  t.match(text, /^# HELP tracer_audit_events /m)
  t.match(text, /^# TYPE tracer_audit_events gauge$/m)
  t.strictSame(
    Object.fromEntries(['complete', 'in_progress', 'stuck', 'contradiction'].map((verdict) => [verdict, value(text, `tracer_audit_events{verdict="${verdict}"}`)])),
    { complete: 0, in_progress: 1, stuck: 1, contradiction: 1 },
    'event 4 is older than 7 days; event 5 asked for no baseband data'
  )
  const stuck = (site: string, stage: string) => value(text, `tracer_audit_stuck_stages{site="${site}",stage="${stage}"}`)
  t.equal(stuck('', 'tsar_classification'), 0, 'the classification has no site')
  t.equal(stuck('chime', 'baseband_callback_request'), 1)
  t.equal(stuck('kko', 'baseband_callback_request'), 2)
  t.equal(stuck('kko', 'baseband_conversion'), 0, 'complete at event 3; event 2 is not six hours old')
  t.equal(stuck('kko', 'data_registration'), 1)
  t.equal(stuck('kko', 'data_replication_to_minoc'), 1)
  t.equal(stuck('gbo', 'baseband_callback_request'), 0, 'every site and stage has its series')
  t.equal(stuck('hco', 'data_replication_to_minoc'), 0)
  t.equal(value(text, 'tracer_audit_computed_timestamp_seconds'), NOW / 1000)
  t.match(text, /^process_resident_memory_bytes \d+/m, 'beside the other metrics')
})

t.test('the audit behind the gauges runs at most once a minute, whoever scrapes', async (t) => {
  const { app, clock, reads, event, scrape } = await metricsApp(t)
  await app.store.events.upsert([event(1, 20 * MINUTE, { baseband: true })])
  await Promise.all([scrape(), scrape(), scrape()])
  t.equal(reads.window, 1, 'three scrapes at once share one audit')

  await app.store.events.upsert([event(2, 30 * MINUTE, { baseband: true })])
  clock.now += 59_999
  t.equal(value(await scrape(), 'tracer_audit_events{verdict="stuck"}'), 1, 'within the minute: the last audit’s numbers')
  t.equal(reads.window, 1)
  clock.now += 1
  const text = await scrape()
  t.equal(reads.window, 2, 'a minute after the last audit: another')
  t.equal(value(text, 'tracer_audit_events{verdict="stuck"}'), 2)
  t.equal(value(text, 'tracer_audit_computed_timestamp_seconds'), (NOW + 60_000) / 1000)
})

t.test('no other route runs the audit behind the gauges', async (t) => {
  const { app, clock, reads, event, scrape } = await metricsApp(t)
  await app.store.events.upsert([event(1, 20 * MINUTE, { baseband: true })])
  const writer = (await userWithTokens(app, 'pipeline', 'writer')).access_token
  const day = `start_time_utc=${new Date(NOW - DAY).toISOString()}&end_time_utc=${new Date(NOW).toISOString()}`
  const requests = [
    '/health', '/ready', '/version', '/openapi.json', '/auth/verify', `/v1/events?${day}`, '/v1/events/1',
    `/v1/event-tracer/baseband-callbacks?${day}`, '/v1/event-tracer/event-status/1', '/v1/event-tracer/audit/1', '/v1/event-tracer/history/1'
  ]
  for (let minute = 0; minute < 3; minute++) {
    clock.now += 2 * MINUTE
    for (const url of requests) await app.inject({ url, headers: { authorization: writer } })
    await app.inject({ method: 'POST', url: '/v1/event-tracer/update-trace', headers: { authorization: writer }, payload: { event: 1, site: 'kko', stage: 'baseband_conversion', status: 'complete' } })
  }
  t.equal(reads.window, 0, 'minutes went by, every other route answered, and no audit ran')
  t.equal(value(await scrape(), 'tracer_audit_events{verdict="stuck"}'), 1)
  t.equal(reads.window, 1, 'the scrape ran it')
})

t.test('a failed audit leaves /metrics answering, with the gauges’ last values', async (t) => {
  const { app, clock, event, scrape } = await metricsApp(t)
  await app.store.events.upsert([event(1, 20 * MINUTE, { baseband: true })])
  t.equal(value(await scrape(), 'tracer_audit_events{verdict="stuck"}'), 1)
  await app.store.close()
  clock.now += 2 * MINUTE
  const text = await scrape()
  t.equal(value(text, 'tracer_audit_events{verdict="stuck"}'), 1, 'the last values')
  t.equal(value(text, 'tracer_audit_computed_timestamp_seconds'), NOW / 1000, 'their time says how old they are')
  // Counted in the store's own metrics (by the next scrape: one scrape reads its series side by side).
  t.match(await scrape(), /^store_operation_duration_seconds_count\{operation="audits\.windowPage",outcome="error"\} 1$/m, 'the failure is counted')
})
