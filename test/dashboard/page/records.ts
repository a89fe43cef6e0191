import type { AuditedEvent, AuditFinding, Trace } from '../../../dashboard/src/api-types.js'

/** Audit records and traces as the service sends them, built small for the page's unit tests. */
export function finding(rule: AuditFinding['rule'], site: string | null, stage: AuditFinding['stage']): AuditFinding {
  return { rule, severity: rule === 'stuck' ? 'stuck' : 'contradiction', site, stage, detail: `${rule} at ${site}` }
}

export function audited(eventNo: number, overrides: Partial<AuditedEvent> = {}): AuditedEvent {
  return {
    event_no: eventNo,
    timestamp_utc: '2026-03-01T12:00:00.000Z',
    snr: 12.5,
    known_source_name: 'B0329+54',
    sites: ['chime', 'kko'],
    verdict: 'in_progress',
    findings: [],
    ...overrides
  }
}

export function trace(eventNo: number, complete: string[] = []): Trace {
  const value: Record<string, unknown> = { event_no: eventNo, update_timestamp: 100 }
  for (const key of complete) value[key] = 'complete'
  return value as Trace
}
