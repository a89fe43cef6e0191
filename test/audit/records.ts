import t from 'tap'
import { auditedEventRecord } from '../../src/domain/audit/audited-event.js'
import { countInSummary, emptySummary } from '../../src/domain/audit/rules.js'
import { audit, completeTrace, heartbeat, HOUR, registered, T0, trace } from './fixtures.js'
import { wireErrors } from './wire.js'

const stored = { event_no: 17, timestamp: T0, snr: 12.5, known_source_name: 'B0329+54' }

t.test('an audited event record is what the wire schema says', async (t) => {
  const results = [
    audit({ trace: completeTrace('chime'), datatrail: [registered('baseband')] }),
    audit({
      want: { baseband: true, kko_baseband: true },
      trace: trace({ 'data_registration@kko': 'complete' }),
      heartbeats: [heartbeat(1, 'kko', { error: 'x', files: 3 })],
      after: 50 * HOUR
    })
  ]
  for (const result of results) {
    const record = auditedEventRecord(stored, result)
    t.equal(wireErrors('AuditedEvent', record), '', 'valid')
    t.strictSame(Object.keys(record), ['event_no', 'timestamp_utc', 'snr', 'known_source_name', 'sites', 'verdict', 'findings'])
    t.equal(record.timestamp_utc, '2026-03-01T12:00:00.000Z')
  }
  t.strictSame(results.map((result) => result.verdict), ['complete', 'contradiction'])
})

t.test('the summary counts every verdict of the window', async (t) => {
  const summary = emptySummary()
  for (const verdict of ['complete', 'stuck', 'complete', 'contradiction', 'in_progress', 'complete'] as const) {
    countInSummary(summary, { verdict })
  }
  t.strictSame(summary, { events: 6, complete: 3, in_progress: 1, stuck: 1, contradiction: 1 })
  const report = {
    window: { start_time_utc: '2026-03-01T00:00:00.000Z', end_time_utc: '2026-03-02T00:00:00.000Z' },
    generated_at: '2026-03-02T08:00:00.000Z',
    summary,
    events: [auditedEventRecord(stored, audit({}))]
  }
  t.equal(wireErrors('AuditReport', report), '', 'a report validates')
  t.match(wireErrors('AuditReport', { ...report, extra: 1 }), /additional properties/, 'no member beyond the schema')
})
