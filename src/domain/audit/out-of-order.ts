import type { AuditFinding } from '../../../schemas/audit.js'
import { STAGES } from '../../vocabulary.js'
import { details } from './details.js'
import { finding } from './findings.js'
import type { SiteFacts } from './site-facts.js'

/** `out-of-order`: a stage complete while an earlier stage at its site is not; one per such later stage. */
export function outOfOrderFindings(facts: SiteFacts): AuditFinding[] {
  return STAGES.flatMap((stage, index) => {
    if (facts.stages[stage] !== 'complete') return []
    const earlier = STAGES.slice(0, index).filter((before) => facts.stages[before] === 'incomplete')
    if (earlier.length === 0) return []
    return [finding('out-of-order', facts.site, stage, details.outOfOrder(stage, facts.site, earlier))]
  })
}
