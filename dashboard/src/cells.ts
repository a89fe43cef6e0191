import type { AuditFinding, StageStatus } from './api-types.js'
import type { CellState, PipelineStage } from './labels.js'

export interface Cell {
  state: CellState
  /** The findings that name this cell's site and stage, in the audit's order. */
  findings: AuditFinding[]
}

/**
 * The state of one stage at one site (site null for the classification): a contradiction when a
 * contradiction finding names it, else stuck when a stuck finding does, else what the trace says.
 */
export function cellOf(
  findings: readonly AuditFinding[],
  site: string | null,
  stage: PipelineStage,
  value: StageStatus | undefined
): Cell {
  const named = findings.filter((finding) => finding.site === site && finding.stage === stage)
  const state: CellState = named.some((finding) => finding.severity === 'contradiction')
    ? 'contradiction'
    : named.some((finding) => finding.severity === 'stuck')
      ? 'stuck'
      : value === 'complete'
        ? 'complete'
        : 'in_progress'
  return { state, findings: named }
}
