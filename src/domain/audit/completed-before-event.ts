import type { AuditFinding } from '../../../schemas/audit.js'
import { CLASSIFICATION_KEY, CLASSIFICATION_STAGE, STAGES, stageKey, type PipelineStage } from '../../vocabulary.js'
import { details } from './details.js'
import { finding } from './findings.js'
import type { EventFacts } from './site-facts.js'

/**
 * `completed-before-event`: a stage whose first recorded change to complete is earlier than the
 * event itself. No stage can finish before the burst it handles, so the event's time or the
 * writer's clock is wrong; stage latency leaves such a stage out of its figures and counts it.
 */
export function completedBeforeEventFindings(facts: EventFacts, eventTimeMs: number): AuditFinding[] {
  const findings: AuditFinding[] = []
  const check = (stage: PipelineStage, site: string | null, key: string) => {
    const completedAt = facts.firstCompletions.get(key)
    if (completedAt !== undefined && completedAt * 1000 < eventTimeMs) {
      findings.push(finding('completed-before-event', site, stage, details.completedBeforeEvent(stage, site, eventTimeMs - completedAt * 1000)))
    }
  }
  check(CLASSIFICATION_STAGE, null, CLASSIFICATION_KEY)
  for (const site of facts.sites) {
    for (const stage of STAGES) check(stage, site.site, stageKey(stage, site.site))
  }
  return findings
}
