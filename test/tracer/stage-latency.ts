import t from 'tap'
import { DAY, HOUR, MINUTE, NOW, pipelineApp, windowQuery } from './pipeline.js'

const T0 = NOW - DAY
const WINDOW = windowQuery(T0, T0 + HOUR)

const row = (stage: string, site: string | null, complete: number, incomplete: number, latencies: [number, number, number] | null = null, beforeEvent = 0) => ({
  stage,
  site,
  complete,
  incomplete,
  completed_before_event: beforeEvent,
  p50_s: latencies?.[0] ?? null,
  p95_s: latencies?.[1] ?? null,
  max_s: latencies?.[2] ?? null
})

t.test('stage latency: counts by current value, nearest-rank percentiles of first completions, rows per requested site', async (t) => {
  const pipeline = await pipelineApp(t)
  /** update-trace at `seconds` after the event at `minutes` after T0. */
  const at = async (minutes: number, seconds: number, event: number, stage: string, site: string, status = 'complete') => {
    pipeline.clock.now = T0 + minutes * MINUTE + seconds * 1000
    await pipeline.write('/v1/event-tracer/update-trace', { event, site, stage, status })
  }
  await pipeline.write('/v1/events', [
    { event_no: 1, timestamp_utc: new Date(T0).toISOString(), snr: 10, known_source_name: 'EXT', actions: { want: { baseband: true, gbo_baseband: true }, got: {} } },
    { event_no: 2, timestamp_utc: new Date(T0 + MINUTE).toISOString(), snr: 10, known_source_name: 'EXT', actions: { want: { baseband: true }, got: {} } },
    { event_no: 3, timestamp_utc: new Date(T0 + 2 * MINUTE).toISOString(), snr: 10, known_source_name: 'EXT', actions: { want: { baseband: true }, got: {} } },
    // Not counted: no baseband data asked for, or outside the window.
    { event_no: 4, timestamp_utc: new Date(T0 + 3 * MINUTE).toISOString(), snr: 10, known_source_name: 'EXT', actions: { want: { intensity: true }, got: {} } },
    { event_no: 5, timestamp_utc: new Date(T0 + HOUR).toISOString(), snr: 10, known_source_name: 'EXT', actions: { want: { kko_baseband: true }, got: {} } }
  ])
  // Callback requests at chime completed 60 s, 120 s and 600 s after their events.
  await at(0, 60, 1, 'baseband_callback_request', 'chime')
  await at(1, 120, 2, 'baseband_callback_request', 'chime')
  await at(2, 600, 3, 'baseband_callback_request', 'chime')
  // A key completed, reverted, completed again: timed from its first completion; one reverted stays incomplete.
  await at(0, 100, 1, 'baseband_conversion', 'chime')
  await at(0, 200, 1, 'baseband_conversion', 'chime', 'incomplete')
  await at(0, 300, 1, 'baseband_conversion', 'chime')
  await at(1, 50, 2, 'baseband_conversion', 'chime')
  await at(1, 70, 2, 'baseband_conversion', 'chime', 'incomplete')
  await at(0, 1800, 1, 'tsar_classification', 'chime')
  await at(3, 5, 4, 'tsar_classification', 'chime')
  await at(60, 5, 5, 'baseband_callback_request', 'kko')
  // Complete without a recorded transition (written straight into the store, or not_required): counted, not timed.
  const trace3 = await pipeline.app.store.traces.find(3)
  await pipeline.app.store.traces.upsert([
    { ...trace3, 'stages/tsar_classification': 'complete', 'stages/baseband_conversion/sites/chime': 'not_required' }
  ])

  const response = await pipeline.read(`/v1/event-tracer/stage-latency?${WINDOW}`)
  t.equal(response.statusCode, 200, response.body)
  t.strictSame(response.json(), {
    window: { start_time_utc: new Date(T0).toISOString(), end_time_utc: new Date(T0 + HOUR).toISOString() },
    stages: [
      row('tsar_classification', null, 2, 1, [1800, 1800, 1800]),
      row('baseband_callback_request', 'chime', 3, 0, [120, 600, 600]),
      row('baseband_callback_request', 'gbo', 0, 1),
      row('baseband_conversion', 'chime', 2, 1, [100, 100, 100]),
      row('baseband_conversion', 'gbo', 0, 1),
      row('data_registration', 'chime', 0, 3),
      row('data_registration', 'gbo', 0, 1),
      row('data_replication_to_minoc', 'chime', 0, 3),
      row('data_replication_to_minoc', 'gbo', 0, 1)
    ]
  })
})

t.test('stage latency of a window without baseband events: the classification row alone, untimed', async (t) => {
  const pipeline = await pipelineApp(t)
  const response = await pipeline.read(`/v1/event-tracer/stage-latency?${WINDOW}`)
  t.equal(response.statusCode, 200)
  t.strictSame(response.json().stages, [row('tsar_classification', null, 0, 0)])
})

t.test('stage latency: latencies to the millisecond, percentiles over many events', async (t) => {
  const pipeline = await pipelineApp(t)
  const events = Array.from({ length: 20 }, (_, i) => ({
    event_no: i + 1,
    timestamp_utc: new Date(T0 + i * MINUTE).toISOString(),
    snr: 10,
    known_source_name: 'EXT',
    actions: { want: { hco_baseband: true }, got: {} }
  }))
  await pipeline.write('/v1/events', events)
  for (let i = 0; i < 20; i++) {
    // Latencies 1.001 s, 2.002 s, ... 20.02 s.
    pipeline.clock.now = T0 + i * MINUTE + (i + 1) * 1001
    await pipeline.write('/v1/event-tracer/update-trace', { event: i + 1, site: 'hco', stage: 'data_registration', status: 'complete' })
  }
  const stages = (await pipeline.read(`/v1/event-tracer/stage-latency?${WINDOW}`)).json().stages
  t.strictSame(stages.find((found: { stage: string }) => found.stage === 'data_registration'), row('data_registration', 'hco', 20, 0, [10.01, 19.019, 20.02]))
  t.strictSame(stages.map((found: { site: string | null }) => found.site), [null, 'hco', 'hco', 'hco', 'hco'])
})

t.test('stage latency: the window rules and a token', async (t) => {
  const pipeline = await pipelineApp(t)
  const refusals: [string, RegExp][] = [
    [`end_time_utc=2026-03-01`, /^query\.start_time_utc is required/],
    [windowQuery('2026-03-01', '2026-02-28'), /^query\.end_time_utc must be later than start_time_utc$/],
    [windowQuery('2026-02-29', '2026-03-01'), /^query\.start_time_utc must be a date/],
    [windowQuery('2024-01-01', '2026-03-01'), /^query\.end_time_utc is more than 366 days/]
  ]
  for (const [query, reason] of refusals) {
    const response = await pipeline.read(`/v1/event-tracer/stage-latency?${query}`)
    t.equal(response.statusCode, 400, query)
    t.match(response.json(), { exception: 'BadRequest', reasons: [reason] }, query)
  }
  t.equal((await pipeline.app.inject({ url: `/v1/event-tracer/stage-latency?${WINDOW}` })).statusCode, 401)
})

t.test('a window of many pages gives the event loop a turn between its pages', async (t) => {
  const pipeline = await pipelineApp(t)
  const events = Array.from({ length: 1000 }, (_, i) => ({
    event_no: i + 1,
    timestamp_utc: new Date(T0 + i * 1000).toISOString(),
    snr: 10,
    known_source_name: 'EXT',
    actions: { want: { baseband: true }, got: {} }
  }))
  await pipeline.write('/v1/events', events)
  // SQLite answers at once: without a turn between pages, the whole window would be read while
  // every other connection (and this counter) waited.
  let turns = 0
  let answered = false
  const count = () => {
    turns++
    if (!answered) setImmediate(count)
  }
  setImmediate(count)
  const response = await pipeline.read(`/v1/event-tracer/stage-latency?${WINDOW}`)
  answered = true
  t.equal(response.json().stages[1].incomplete, 1000)
  t.ok(turns >= 5, `the event loop turned ${turns} times while 5 pages were read`)
})

t.test('a stage recorded complete before its event: no negative latency, a count in its row, and a finding of the audit', async (t) => {
  const pipeline = await pipelineApp(t)
  await pipeline.write('/v1/events', [
    { event_no: 1, timestamp_utc: new Date(T0).toISOString(), snr: 10, known_source_name: 'EXT', actions: { want: { baseband: true }, got: {} } },
    { event_no: 2, timestamp_utc: new Date(T0 + MINUTE).toISOString(), snr: 10, known_source_name: 'EXT', actions: { want: { baseband: true }, got: {} } }
  ])
  // The writer's clock an hour behind: its update of event 1 is recorded an hour before the event.
  pipeline.clock.now = T0 - HOUR
  await pipeline.write('/v1/event-tracer/update-trace', { event: 1, site: 'chime', stage: 'baseband_callback_request', status: 'complete' })
  pipeline.clock.now = T0 + MINUTE + 90_000
  await pipeline.write('/v1/event-tracer/update-trace', { event: 2, site: 'chime', stage: 'baseband_callback_request', status: 'complete' })
  pipeline.clock.now = T0 + 2 * MINUTE

  const latency = await pipeline.read(`/v1/event-tracer/stage-latency?${WINDOW}`)
  t.strictSame(latency.json().stages[1], row('baseband_callback_request', 'chime', 2, 0, [90, 90, 90], 1), 'timed from event 2 alone; event 1 counted apart')
  const audited = await pipeline.read('/v1/event-tracer/audit/1')
  t.equal(audited.statusCode, 200)
  t.match(audited.json(), {
    verdict: 'contradiction',
    findings: [{ rule: 'completed-before-event', severity: 'contradiction', site: 'chime', stage: 'baseband_callback_request', detail: /recorded complete 1\.0 h before the event/ }]
  })
  const report = await pipeline.read(`/v1/event-tracer/audit?${WINDOW}`)
  t.match(report.json(), { summary: { events: 2, contradiction: 1 } })
})
