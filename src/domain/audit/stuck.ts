import type { AuditFinding } from '../../../schemas/audit.js'
import type { StageDeadlines } from '../stage-deadlines.js'
import { CLASSIFICATION_STAGE, STAGES, type PipelineStage, type StageStatus } from '../../vocabulary.js'
import { details } from './details.js'
import { finding } from './rules.js'
import type { EventFacts } from './site-facts.js'

/**
 * `stuck`: a stage still incomplete once its deadline has passed since the event (exactly at the
 * deadline counts), one finding per site and stage; the classification has no site.
 */
export function stuckFindings(facts: EventFacts, elapsedMs: number, deadlines: StageDeadlines): AuditFinding[] {
  const findings: AuditFinding[] = []
  const check = (stage: PipelineStage, site: string | null, status: StageStatus) => {
    if (status === 'incomplete' && elapsedMs >= deadlines[stage]) {
      findings.push(finding('stuck', site, stage, details.stuck(stage, site, elapsedMs, deadlines[stage])))
    }
  }
  check(CLASSIFICATION_STAGE, null, facts.classification)
  for (const site of facts.sites) {
    for (const stage of STAGES) check(stage, site.site, site.stages[stage])
  }
  return findings
}
