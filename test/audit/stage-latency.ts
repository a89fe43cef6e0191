import t from 'tap'
import type { Transition } from '../../schemas/history.js'
import { nearestRank, StageLatency, type LatencyEvent } from '../../src/domain/stage-latency.js'
import { SITES, trace } from './fixtures.js'
import { wireErrors } from './wire.js'

const T = 1_700_000_000_000 // ms; 1.7e9 s
const DAY = 86_400_000
const to = (key: string, value: 'complete' | 'incomplete', at: number): Transition => ({
  key: key === 'tsar' ? 'stages/tsar_classification' : `stages/${key.replace('@', '/sites/')}`,
  from: 'incomplete',
  to: value,
  at,
  by: 'pipeline'
})
const row = (stage: string, site: string | null, complete: number, incomplete: number, p50: number | null, p95: number | null, max: number | null, beforeEvent = 0) => ({
  stage,
  site,
  complete,
  incomplete,
  completed_before_event: beforeEvent,
  p50_s: p50,
  p95_s: p95,
  max_s: max
})

t.test('nearest-rank percentiles', async (t) => {
  const sorted = (values: number[]) => Float64Array.from(values).sort()
  const oneToTwenty = sorted(Array.from({ length: 20 }, (_, index) => index + 1))
  t.strictSame([50, 95, 100].map((p) => nearestRank(oneToTwenty, p)), [10, 19, 20], 'ranks 10, 19 and 20 of 20')
  t.strictSame([50, 95, 100].map((p) => nearestRank(sorted([5, 1, 3]), p)), [3, 5, 5], 'ranks 2, 3 and 3 of 3')
  t.strictSame([50, 95, 100].map((p) => nearestRank(sorted([42]), p)), [42, 42, 42], 'one latency is every percentile')
  t.equal(nearestRank(sorted([]), 50), null, 'none: null')
  t.equal(nearestRank(sorted([60.076999902725]), 50), 60.077, 'to the millisecond')
})

t.test('rows over a hand-computed window', async (t) => {
  const events: LatencyEvent[] = [
    {
      timestamp: T,
      sites: ['chime'],
      trace: trace({
        tsar: 'complete',
        'baseband_callback_request@chime': 'complete',
        'baseband_conversion@chime': 'complete',
        'data_registration@chime': 'incomplete'
      }),
      transitions: [
        to('tsar', 'complete', T / 1000 + 30),
        to('baseband_callback_request@chime', 'complete', T / 1000 + 60),
        to('baseband_conversion@chime', 'incomplete', T / 1000 + 100),
        to('baseband_conversion@chime', 'complete', T / 1000 + 9000),
        to('baseband_conversion@chime', 'complete', T / 1000 + 7200),
        to('baseband_conversion@chime', 'complete', T / 1000 + 8000),
        to('data_registration@chime', 'complete', T / 1000 + 7300), // undone since: counted incomplete, not timed
        to('baseband_conversion@gbo', 'complete', T / 1000 + 5) // a site the event did not ask for
      ]
    },
    {
      timestamp: T + DAY,
      sites: ['chime', 'kko'],
      trace: trace({
        tsar: 'not_required', // complete, but no transition: counted, not timed
        'baseband_callback_request@chime': 'complete',
        'baseband_callback_request@kko': 'complete'
      }),
      transitions: [to('baseband_callback_request@chime', 'complete', (T + DAY) / 1000 + 120), to('baseband_callback_request@kko', 'complete', (T + DAY) / 1000 + 600.5)]
    },
    { timestamp: T + 2 * DAY, sites: ['chime'], trace: null, transitions: [] }
  ]
  const latency = new StageLatency(SITES)
  for (const event of events) latency.add(event)
  t.strictSame(latency.rows(), [
    row('tsar_classification', null, 2, 1, 30, 30, 30),
    row('baseband_callback_request', 'chime', 2, 1, 60, 120, 120),
    row('baseband_callback_request', 'kko', 1, 0, 600.5, 600.5, 600.5),
    row('baseband_conversion', 'chime', 1, 2, 7200, 7200, 7200),
    row('baseband_conversion', 'kko', 0, 1, null, null, null),
    row('data_registration', 'chime', 0, 3, null, null, null),
    row('data_registration', 'kko', 0, 1, null, null, null),
    row('data_replication_to_minoc', 'chime', 0, 3, null, null, null),
    row('data_replication_to_minoc', 'kko', 0, 1, null, null, null)
  ])
  const report = { window: { start_time_utc: '2023-11-14T00:00:00.000Z', end_time_utc: '2023-11-17T00:00:00.000Z' }, stages: latency.rows() }
  t.equal(wireErrors('StageLatencyReport', report), '', 'the report is its wire shape')
})

t.test('sites in configured order, whichever came first; no event: the classification row alone', async (t) => {
  t.strictSame(new StageLatency(SITES).rows(), [row('tsar_classification', null, 0, 0, null, null, null)])

  const latency = new StageLatency(SITES)
  latency.add({ timestamp: T, sites: ['hco'], trace: null, transitions: [] })
  latency.add({ timestamp: T, sites: ['kko'], trace: null, transitions: [] })
  latency.add({ timestamp: T, sites: ['drao'], trace: null, transitions: [] })
  t.strictSame(
    latency.rows().map((item) => `${item.stage}@${item.site}`),
    [
      'tsar_classification@null',
      ...['baseband_callback_request', 'baseband_conversion', 'data_registration', 'data_replication_to_minoc'].flatMap((stage) => [
        `${stage}@kko`,
        `${stage}@hco`
      ])
    ],
    'an unconfigured site gets no row'
  )
})

t.test('percentiles over twenty events fed in any order', async (t) => {
  const latency = new StageLatency(SITES)
  for (const seconds of [7, 13, 1, 20, 2, 19, 3, 18, 4, 17, 5, 16, 6, 15, 8, 14, 9, 12, 10, 11]) {
    const timestamp = T + seconds * DAY
    latency.add({
      timestamp,
      sites: ['gbo'],
      trace: trace({ 'baseband_conversion@gbo': 'complete' }),
      transitions: [to('baseband_conversion@gbo', 'complete', timestamp / 1000 + seconds * 60)]
    })
  }
  const conversion = latency.rows().find((item) => item.stage === 'baseband_conversion')
  t.strictSame(conversion, row('baseband_conversion', 'gbo', 20, 0, 600, 1140, 1200))
})
