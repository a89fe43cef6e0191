import t from 'tap'
import type { Transition } from '../../schemas/history.js'
import { StageLatency } from '../../src/domain/stage-latency.js'
import { audit, completeTrace, found, HOUR, SITES, T0, trace } from './fixtures.js'

const completedAt = (key: string, atMs: number): Transition => ({ key, from: 'incomplete', to: 'complete', at: atMs / 1000, by: 'pipeline' })

t.test('completed-before-event: a stage first recorded complete before its event is a contradiction, one finding per stage', async (t) => {
  const result = audit({
    trace: completeTrace('chime'),
    transitions: [
      completedAt('stages/tsar_classification', T0 + 30_000),
      completedAt('stages/baseband_callback_request/sites/chime', T0 - HOUR),
      completedAt('stages/baseband_conversion/sites/chime', T0 - 1),
      completedAt('stages/data_registration/sites/chime', T0 + 600_000),
      // Completed before the event, then again after: the first recorded completion is what counts.
      completedAt('stages/data_replication_to_minoc/sites/chime', T0 + 900_000),
      completedAt('stages/data_replication_to_minoc/sites/chime', T0 - 2 * HOUR),
      // A site the event did not ask for is not audited.
      completedAt('stages/baseband_conversion/sites/kko', T0 - HOUR)
    ]
  })
  t.strictSame(found(result, 'completed-before-event'), [
    'baseband_callback_request@chime',
    'baseband_conversion@chime',
    'data_replication_to_minoc@chime'
  ])
  t.equal(result.verdict, 'contradiction')
  const [first] = result.findings
  t.strictSame(first, {
    rule: 'completed-before-event',
    severity: 'contradiction',
    site: 'chime',
    stage: 'baseband_callback_request',
    detail: "baseband_callback_request at chime was recorded complete 1.0 h before the event; an event time or a writer's clock is wrong"
  })
  t.strictSame(found(audit({ trace: completeTrace('chime'), transitions: [completedAt('stages/tsar_classification', T0)] }), 'completed-before-event'), [], 'at the event time exactly is not before it')
  t.strictSame(found(audit({ trace: trace({ tsar: 'complete' }), transitions: [completedAt('stages/tsar_classification', T0 - 5000)] }), 'completed-before-event'), ['tsar_classification'])
})

t.test('stage latency leaves a stage recorded complete before its event out of the latencies and counts it', async (t) => {
  const latency = new StageLatency(SITES)
  latency.add({
    timestamp: T0,
    sites: ['chime'],
    trace: completeTrace('chime'),
    transitions: [completedAt('stages/tsar_classification', T0 - HOUR), completedAt('stages/baseband_callback_request/sites/chime', T0 + 60_000)]
  })
  latency.add({ timestamp: T0 + HOUR, sites: ['chime'], trace: completeTrace('chime'), transitions: [completedAt('stages/tsar_classification', T0 + HOUR + 30_000)] })
  const [classification, callback] = latency.rows()
  t.strictSame(classification, {
    stage: 'tsar_classification',
    site: null,
    complete: 2,
    incomplete: 0,
    completed_before_event: 1,
    p50_s: 30,
    p95_s: 30,
    max_s: 30
  }, 'no negative latency: the early one is counted apart')
  t.match(callback, { completed_before_event: 0, p50_s: 60 })
})
