import type { AuditSummary } from '../../../schemas/audit.js'
import type { EventAudit } from './audit-event.js'

export const emptySummary = (): AuditSummary => ({ events: 0, complete: 0, in_progress: 0, stuck: 0, contradiction: 0 })

/** Counts one audited event into a window's summary (which ignores the report's filters). */
export function countInSummary(summary: AuditSummary, audit: Pick<EventAudit, 'verdict'>): void {
  summary.events += 1
  summary[audit.verdict] += 1
}
