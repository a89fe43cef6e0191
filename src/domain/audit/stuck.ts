import type { AuditFinding } from '../../../schemas/audit.js'
import type { StageDeadlines } from '../stage-deadlines.js'
import { CLASSIFICATION_STAGE, STAGES, type PipelineStage } from '../../vocabulary.js'
import { details } from './details.js'
import { finding } from './findings.js'
import type { EventFacts } from './site-facts.js'

/** An audited stage still incomplete: its site (null for the classification) and stage. */
export type PendingStage = [site: string | null, stage: PipelineStage]

/** The audited stages still incomplete, classification first, then each requested site's in pipeline order. */
export function pendingStages(facts: EventFacts): PendingStage[] {
  const pending: PendingStage[] = []
  if (facts.classification === 'incomplete') pending.push([null, CLASSIFICATION_STAGE])
  for (const site of facts.sites) for (const stage of STAGES) if (site.stages[stage] === 'incomplete') pending.push([site.site, stage])
  return pending
}

/**
 * `stuck`: a stage still incomplete once its deadline has passed since the event (exactly at the
 * deadline counts), one finding per site and stage; the classification has no site. The one place
 * the rule is written: the audit of kept facts, of a kept report and of records all come here.
 */
export function stuckFindings(pending: readonly PendingStage[], elapsedMs: number, deadlines: StageDeadlines): AuditFinding[] {
  return pending
    .filter(([, stage]) => elapsedMs >= deadlines[stage])
    .map(([site, stage]) => finding('stuck', site, stage, details.stuck(stage, site, elapsedMs, deadlines[stage])))
}
