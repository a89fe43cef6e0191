import type { AuditFinding, AuditVerdict } from '../../../schemas/audit.js'

/** A contradiction outweighs lateness; with no finding, the event is complete or still in progress. */
export function verdictOf(findings: readonly AuditFinding[], everyStageComplete: boolean): AuditVerdict {
  if (findings.some((found) => found.severity === 'contradiction')) return 'contradiction'
  if (findings.some((found) => found.severity === 'stuck')) return 'stuck'
  return everyStageComplete ? 'complete' : 'in_progress'
}
