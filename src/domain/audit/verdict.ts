import type { AuditFinding, AuditSummary, AuditVerdict } from '../../../schemas/audit.js'
import type { EventAudit } from './audited-event.js'

/** A contradiction outweighs lateness; with no finding, the event is complete or still in progress. */
export function verdictOf(findings: readonly AuditFinding[], everyStageComplete: boolean): AuditVerdict {
  if (findings.some((found) => found.severity === 'contradiction')) return 'contradiction'
  if (findings.some((found) => found.severity === 'stuck')) return 'stuck'
  return everyStageComplete ? 'complete' : 'in_progress'
}

export const emptySummary = (): AuditSummary => ({ events: 0, complete: 0, in_progress: 0, stuck: 0, contradiction: 0 })

/** Counts one audited event into a window's summary (which ignores the report's filters). */
export function countInSummary(summary: AuditSummary, audit: Pick<EventAudit, 'verdict'>): void {
  summary.events += 1
  summary[audit.verdict] += 1
}
