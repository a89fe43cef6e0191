import t, { type Test } from 'tap'
import { assertRetryLater } from './fixtures.js'
import { allStagesAt, DAY, HOUR, iso, member, MINUTE, NOW, pipelineApp, windowQuery, type EventState } from './pipeline.js'

const LAST_WEEK = windowQuery(NOW - 7 * DAY, NOW)

interface Finding {
  rule: string
  severity: 'stuck' | 'contradiction'
  site: string | null
  stage: string | null
  detail: string
}

const stuck = (site: string | null, stage: string, detail: string): Finding => ({ rule: 'stuck', severity: 'stuck', site, stage, detail })
const contradiction = (rule: string, site: string | null, stage: string, detail: string): Finding => ({ rule, severity: 'contradiction', site, stage, detail })

/**
 * Writes one event through the routes and checks its record, alone (audit/{event_no}) and in the
 * window's report: the same record, with the verdict and the findings expected, in their order.
 */
async function audits(t: Test, state: EventState, expected: { sites?: string[]; verdict: string; findings: Finding[] }) {
  const pipeline = await pipelineApp(t)
  await pipeline.report(state)
  const record = {
    event_no: state.event_no,
    timestamp_utc: iso(NOW - state.ago),
    snr: 10,
    known_source_name: 'EXT',
    sites: expected.sites ?? ['chime'],
    verdict: expected.verdict,
    findings: expected.findings
  }
  const one = await pipeline.read(`/v1/event-tracer/audit/${state.event_no}`)
  t.equal(one.statusCode, 200, one.body)
  t.strictSame(one.json(), record, 'audit/{event_no}')
  const report = await pipeline.read(`/v1/event-tracer/audit?${LAST_WEEK}`)
  t.equal(report.statusCode, 200, report.body)
  t.strictSame(report.json().events, [record], 'the window’s report')
  t.equal(report.json().summary[expected.verdict], 1)
}

t.test('stuck: a stage incomplete once its deadline has passed since the event, exactly at it included', async (t) => {
  await t.test('callback request at the primary site, 20 min after (deadline 15 min)', (t) =>
    audits(t, { event_no: 1, ago: 20 * MINUTE }, {
      verdict: 'stuck',
      findings: [stuck('chime', 'baseband_callback_request', 'baseband_callback_request at chime incomplete 20.0 min after the event; deadline 15 min')]
    }))
  await t.test('exactly at the deadline', (t) =>
    audits(t, { event_no: 2, ago: 15 * MINUTE }, {
      verdict: 'stuck',
      findings: [stuck('chime', 'baseband_callback_request', 'baseband_callback_request at chime incomplete 15.0 min after the event; deadline 15 min')]
    }))
  await t.test('a millisecond before it: in progress', (t) => audits(t, { event_no: 3, ago: 15 * MINUTE - 1 }, { verdict: 'in_progress', findings: [] }))
  await t.test('the classification has no site', (t) =>
    audits(t, { event_no: 4, ago: 2 * HOUR, want: { kko_baseband: true }, complete: ['baseband_callback_request@kko'] }, {
      sites: ['kko'],
      verdict: 'stuck',
      findings: [stuck(null, 'tsar_classification', 'tsar_classification incomplete 2.0 h after the event; deadline 1 h')]
    }))
})

t.test('out-of-order: a stage complete while an earlier one at the site is not', (t) =>
  audits(t, { event_no: 5, ago: 10 * MINUTE, want: { kko_baseband: true }, complete: ['baseband_conversion@kko'] }, {
    sites: ['kko'],
    verdict: 'contradiction',
    findings: [
      contradiction('out-of-order', 'kko', 'baseband_conversion', 'baseband_conversion at kko complete while earlier stage baseband_callback_request is incomplete')
    ]
  }))

t.test('registered-not-in-datatrail: registration complete, the member not registered', (t) =>
  audits(
    t,
    {
      event_no: 6,
      ago: 10 * MINUTE,
      complete: ['baseband_callback_request@chime', 'baseband_conversion@chime', 'data_registration@chime'],
      datatrail: { baseband: member({ registered: false }) }
    },
    {
      verdict: 'contradiction',
      findings: [
        contradiction('registered-not-in-datatrail', 'chime', 'data_registration', 'data_registration at chime complete but datatrail member baseband is not registered')
      ]
    }
  ))

t.test('datatrail-not-in-trace: the member registered, registration incomplete', (t) =>
  audits(t, { event_no: 7, ago: 10 * MINUTE, datatrail: { baseband: member() } }, {
    verdict: 'contradiction',
    findings: [
      contradiction('datatrail-not-in-trace', 'chime', 'data_registration', 'datatrail member baseband is registered but data_registration at chime is incomplete')
    ]
  }))

t.test('classified-not-in-trace: the event record classified, the trace says the classification is incomplete', (t) =>
  audits(t, { event_no: 31, ago: 10 * MINUTE, classification: 'astrophysical', complete: ['baseband_callback_request@chime'] }, {
    verdict: 'contradiction',
    findings: [
      contradiction('classified-not-in-trace', null, 'tsar_classification', 'the event is classified "astrophysical" but tsar_classification is incomplete in the trace')
    ]
  }))

t.test('classified-not-in-trace beside stuck: past the deadline both stand, and the verdict is contradiction', (t) =>
  audits(t, { event_no: 32, ago: 2 * HOUR, classification: 'rfi', complete: allStagesAt('chime'), datatrail: { baseband: member() } }, {
    verdict: 'contradiction',
    findings: [
      contradiction('classified-not-in-trace', null, 'tsar_classification', 'the event is classified "rfi" but tsar_classification is incomplete in the trace'),
      stuck(null, 'tsar_classification', 'tsar_classification incomplete 2.0 h after the event; deadline 1 h')
    ]
  }))

t.test('an unclassified event past the classification deadline stays stuck, not a contradiction', (t) =>
  audits(t, { event_no: 33, ago: 2 * HOUR, classification: 'unclassified', complete: allStagesAt('chime'), datatrail: { baseband: member() } }, {
    verdict: 'stuck',
    findings: [stuck(null, 'tsar_classification', 'tsar_classification incomplete 2.0 h after the event; deadline 1 h')]
  }))

t.test('replicated-with-missing-files: replication complete, the member lists missing files', (t) =>
  audits(
    t,
    { event_no: 8, ago: 10 * MINUTE, complete: ['tsar', ...allStagesAt('chime')], datatrail: { baseband: member({ missing_files: ['/a', '/b'] }) } },
    {
      verdict: 'contradiction',
      findings: [
        contradiction(
          'replicated-with-missing-files',
          'chime',
          'data_replication_to_minoc',
          'data_replication_to_minoc at chime complete but datatrail member baseband lists 2 missing files'
        )
      ]
    }
  ))

t.test('file-count-mismatch: the last finished heartbeat counts other files than the member', (t) =>
  audits(
    t,
    {
      event_no: 9,
      ago: 10 * MINUTE,
      want: { gbo_baseband: true },
      complete: ['baseband_callback_request@gbo', 'baseband_conversion@gbo', 'data_registration@gbo'],
      datatrail: { gbo_baseband: member({ num_files: 10 }) },
      heartbeats: [
        { id: 91, site: 'gbo', files: 10 },
        { id: 93, site: 'gbo', files: 99, finished: false },
        { id: 92, site: 'gbo', files: 12 },
        { id: 94, site: 'kko', files: 50 }
      ]
    },
    {
      sites: ['gbo'],
      verdict: 'contradiction',
      findings: [
        contradiction('file-count-mismatch', 'gbo', 'data_registration', 'heartbeat 92 at gbo reports 12 data files but datatrail member gbo_baseband has num_files 10')
      ]
    }
  ))

t.test('heartbeat-error: conversion complete while a heartbeat of the site reports an error', (t) =>
  audits(
    t,
    {
      event_no: 10,
      ago: 10 * MINUTE,
      want: { hco_baseband: true },
      complete: ['baseband_callback_request@hco', 'baseband_conversion@hco'],
      heartbeats: [{ id: 101, site: 'hco', error: 'disk full', finished: false }]
    },
    {
      sites: ['hco'],
      verdict: 'contradiction',
      findings: [
        contradiction('heartbeat-error', 'hco', 'baseband_conversion', 'heartbeat 101 at hco reports the error "disk full" but baseband_conversion at hco is complete')
      ]
    }
  ))

t.test('complete: every audited stage complete and the records agree', (t) =>
  audits(
    t,
    {
      event_no: 11,
      ago: 3 * DAY,
      want: { baseband: true, kko_baseband: true, intensity: true },
      complete: ['tsar', ...allStagesAt('chime'), ...allStagesAt('kko')],
      datatrail: { baseband: member(), kko_baseband: member({ num_files: 4 }) },
      heartbeats: [{ id: 111, site: 'chime' }, { id: 112, site: 'kko', files: 4 }]
    },
    { sites: ['chime', 'kko'], verdict: 'complete', findings: [] }
  ))

t.test('sites not requested are not audited', (t) =>
  audits(
    t,
    {
      event_no: 12,
      ago: 3 * DAY,
      want: { kko_baseband: true },
      complete: ['tsar', ...allStagesAt('kko'), 'baseband_conversion@chime'],
      datatrail: { kko_baseband: member(), baseband: member({ missing_files: ['/x'] }) },
      heartbeats: [{ id: 121, site: 'chime', error: 'lost', files: 1 }]
    },
    { sites: ['kko'], verdict: 'complete', findings: [] }
  ))

t.test('a contradiction outweighs lateness; findings by site (null first), stage, then rule', (t) =>
  audits(
    t,
    {
      event_no: 13,
      ago: 2 * HOUR,
      want: { baseband: true, kko_baseband: true },
      complete: ['baseband_conversion@kko', 'data_registration@kko'],
      datatrail: { kko_baseband: member({ registered: false }) }
    },
    {
      sites: ['chime', 'kko'],
      verdict: 'contradiction',
      findings: [
        stuck(null, 'tsar_classification', 'tsar_classification incomplete 2.0 h after the event; deadline 1 h'),
        stuck('chime', 'baseband_callback_request', 'baseband_callback_request at chime incomplete 2.0 h after the event; deadline 15 min'),
        stuck('kko', 'baseband_callback_request', 'baseband_callback_request at kko incomplete 2.0 h after the event; deadline 15 min'),
        contradiction('out-of-order', 'kko', 'baseband_conversion', 'baseband_conversion at kko complete while earlier stage baseband_callback_request is incomplete'),
        contradiction('out-of-order', 'kko', 'data_registration', 'data_registration at kko complete while earlier stage baseband_callback_request is incomplete'),
        contradiction('registered-not-in-datatrail', 'kko', 'data_registration', 'data_registration at kko complete but datatrail member kko_baseband is not registered')
      ]
    }
  ))

t.test('deadlines are measured against the app’s clock and follow STAGE_DEADLINES', async (t) => {
  const pipeline = await pipelineApp(t, { STAGE_DEADLINES: 'baseband_callback_request=1h' })
  await pipeline.report({ event_no: 1, ago: 20 * MINUTE })
  const verdict = async () => (await pipeline.read('/v1/event-tracer/audit/1')).json().verdict
  t.equal(await verdict(), 'in_progress', '20 min of 1 h')
  pipeline.clock.now += 40 * MINUTE
  t.equal(await verdict(), 'stuck', 'the clock moved on to the deadline')
  const report = (await pipeline.read(`/v1/event-tracer/audit?${LAST_WEEK}`)).json()
  t.equal(report.generated_at, iso(NOW + 40 * MINUTE), 'generated_at is the clock’s')
  t.strictSame(
    report.events[0].findings.map((found: { detail: string }) => found.detail),
    [
      'tsar_classification incomplete 1.0 h after the event; deadline 1 h',
      'baseband_callback_request at chime incomplete 1.0 h after the event; deadline 1 h'
    ]
  )
})

/** Events of each verdict at the sites they ask for; the window's summary counts them all. */
const mixedWindow: EventState[] = [
  { event_no: 1, ago: 3 * DAY, complete: ['tsar', ...allStagesAt('chime')], datatrail: { baseband: member() } },
  { event_no: 2, ago: 10 * MINUTE, want: { kko_baseband: true } },
  { event_no: 3, ago: 5 * HOUR, want: { baseband: true, gbo_baseband: true }, complete: ['tsar'] },
  { event_no: 4, ago: 10 * MINUTE, want: { kko_baseband: true }, complete: ['baseband_conversion@kko'] },
  { event_no: 5, ago: 6 * DAY, want: { gbo_baseband: true }, complete: ['tsar'] },
  { event_no: 6, ago: 1 * DAY, want: { intensity: true } }
]

t.test('summary counts the whole window; verdict and site narrow the events only', async (t) => {
  const pipeline = await pipelineApp(t)
  for (const state of mixedWindow) await pipeline.report(state)
  const listed = async (filters: string) => {
    const response = await pipeline.read(`/v1/event-tracer/audit?${LAST_WEEK}${filters}`)
    t.equal(response.statusCode, 200, response.body)
    const report = response.json()
    t.strictSame(report.summary, { events: 5, complete: 1, in_progress: 1, stuck: 2, contradiction: 1 }, `summary ${filters}`)
    t.strictSame(report.window, { start_time_utc: iso(NOW - 7 * DAY), end_time_utc: iso(NOW) })
    t.equal(report.generated_at, iso(NOW))
    return report.events.map((event: { event_no: number }) => event.event_no)
  }
  t.strictSame(await listed(''), [5, 1, 3, 2, 4], 'the baseband events, oldest first')
  t.strictSame(await listed('&verdict=stuck'), [5, 3])
  t.strictSame(await listed('&verdict=complete'), [1])
  t.strictSame(await listed('&site=kko'), [2, 4], 'events that asked for kko')
  t.strictSame(await listed('&site=gbo&verdict=stuck'), [5, 3])
  t.strictSame(await listed('&site=hco'), [])
  t.strictSame(await listed('&verdict=contradiction&site=chime'), [])
})

t.test('events ascending by time, then event_no; a window of several pages streams whole', async (t) => {
  const pipeline = await pipelineApp(t)
  const at = iso(NOW - DAY)
  const events = Array.from({ length: 450 }, (_, i) => ({
    event_no: 1000 - i,
    timestamp_utc: i < 3 ? at : iso(NOW - DAY + i * MINUTE),
    snr: 10,
    known_source_name: 'EXT',
    actions: { want: { baseband: true }, got: {} }
  }))
  await pipeline.write('/v1/events', events)
  const response = await pipeline.read(`/v1/event-tracer/audit?${LAST_WEEK}`)
  const report = response.json()
  t.equal(report.events.length, 450)
  t.strictSame(report.events.slice(0, 4).map((event: { event_no: number }) => event.event_no), [998, 999, 1000, 997], 'equal times by event_no')
  t.ok(
    report.events.every((event: { timestamp_utc: string }, i: number) => i === 0 || report.events[i - 1].timestamp_utc <= event.timestamp_utc),
    'ascending by time'
  )
  t.strictSame(report.summary, { events: 450, complete: 0, in_progress: 0, stuck: 450, contradiction: 0 })
  t.strictSame(Object.keys(report), ['window', 'generated_at', 'events', 'summary'], 'the summary last: counted as the events stream')
})

t.test('the window: half-open, both bounds required, in order, at most MAX_WINDOW_DAYS; 400 names the parameter', async (t) => {
  const pipeline = await pipelineApp(t)
  await pipeline.report({ event_no: 1, ago: DAY })
  await pipeline.report({ event_no: 2, ago: 2 * DAY })
  const eventNos = async (query: string) =>
    (await pipeline.read(`/v1/event-tracer/audit?${query}`)).json().events.map((event: { event_no: number }) => event.event_no)
  t.strictSame(await eventNos(windowQuery(NOW - 2 * DAY, NOW - DAY)), [2], 'an event at the start is in, one at the end out')
  t.strictSame(await eventNos(windowQuery('2026-02-27', '2026-02-28T13:00+01:00')), [2], 'dates and offsets')
  t.strictSame(await eventNos(windowQuery('2026-02-27 12:00:00.000999', '2026-02-28 12:00:00.001')), [2, 1], 'as Python writes them, to the ms')

  const refusals: [string, RegExp][] = [
    [`end_time_utc=${iso(NOW)}`, /^query\.start_time_utc is required/],
    [`start_time_utc=${iso(NOW)}`, /^query\.end_time_utc is required/],
    [windowQuery(NOW, NOW), /^query\.end_time_utc must be later than start_time_utc$/],
    [windowQuery('2026-02-30', '2026-03-01'), /^query\.start_time_utc must be a date/],
    [windowQuery('2026-02-01', '01/03/2026'), /^query\.end_time_utc must be a date/],
    [windowQuery('2025-01-01', '2026-03-01'), /^query\.end_time_utc is more than 366 days after start_time_utc$/],
    [`${LAST_WEEK}&verdict=late`, /^query\.verdict must be one of complete, in_progress, stuck, contradiction$/],
    [`${LAST_WEEK}&site=mars`, /^query\.site must be one of chime, kko, gbo, hco$/]
  ]
  for (const [query, reason] of refusals) {
    const response = await pipeline.read(`/v1/event-tracer/audit?${query}`)
    t.equal(response.statusCode, 400, query)
    t.match(response.json(), { exception: 'BadRequest', reasons: [reason] }, query)
  }
})

t.test('audit/{event_no}: 404 for an unknown event and for one that requested no baseband data; 400 for no event_no', async (t) => {
  const pipeline = await pipelineApp(t)
  await pipeline.report({ event_no: 6, ago: DAY, want: { intensity: true } })
  await pipeline.write('/v1/event-tracer/update-trace', { event: 7, site: 'chime', stage: 'baseband_conversion', status: 'complete' })
  const cases: [string, number, string][] = [
    ['/v1/event-tracer/audit/5', 404, 'No event 5.'],
    ['/v1/event-tracer/audit/7', 404, 'No event 7.'],
    ['/v1/event-tracer/audit/6', 404, 'Event 6 requested no baseband data: it has nothing to audit.']
  ]
  for (const [url, status, reason] of cases) {
    const response = await pipeline.read(url)
    t.equal(response.statusCode, status, url)
    t.strictSame(response.json(), { reasons: [reason], exception: 'NotFound' }, url)
  }
  const malformed = await pipeline.read('/v1/event-tracer/audit/1e3')
  t.equal(malformed.statusCode, 400)
  t.match(malformed.json().reasons, [/^path\.event_no /])
})

t.test('the audit needs a token', async (t) => {
  const pipeline = await pipelineApp(t)
  for (const url of [`/v1/event-tracer/audit?${LAST_WEEK}`, '/v1/event-tracer/audit/1']) {
    const response = await pipeline.app.inject({ url })
    t.equal(response.statusCode, 401, url)
    t.equal(response.json().exception, 'Unauthorized')
  }
})

t.test('the report counts against MAX_STREAMED_RESPONSES, as baseband callbacks do', async (t) => {
  const pipeline = await pipelineApp(t, { MAX_STREAMED_RESPONSES: '1' })
  const events = Array.from({ length: 600 }, (_, i) => ({
    event_no: i + 1,
    timestamp_utc: iso(NOW - DAY + i * MINUTE),
    snr: 10,
    known_source_name: 'EXT',
    actions: { want: { baseband: true }, got: {} }
  }))
  await pipeline.write('/v1/events', events)
  // A client that has its headers but reads nothing yet keeps the only slot.
  const holder = await pipeline.app.inject({ url: `/v1/event-tracer/audit?${LAST_WEEK}`, headers: { authorization: pipeline.reader }, payloadAsStream: true })
  t.equal(holder.statusCode, 200)
  for (const url of [`/v1/event-tracer/audit?${LAST_WEEK}`, `/v1/event-tracer/baseband-callbacks?${LAST_WEEK}`]) {
    assertRetryLater(t, await pipeline.read(url), /^This instance is already streaming 1 responses/, url)
  }
  let body = ''
  for await (const chunk of holder.stream()) body += String(chunk)
  t.equal(JSON.parse(body).summary.events, 600, 'the held report is whole')
  t.equal((await pipeline.read(`/v1/event-tracer/audit?${LAST_WEEK}`)).statusCode, 200, 'its slot was given back')
})
