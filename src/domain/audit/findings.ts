import type { AuditFinding, AuditRule, AuditSeverity } from '../../../schemas/audit.js'
import { PIPELINE_STAGES } from '../../vocabulary.js'

const severityOf = (rule: AuditRule): AuditSeverity => (rule === 'stuck' ? 'stuck' : 'contradiction')

export function finding(rule: AuditRule, site: string | null, stage: AuditFinding['stage'], detail: string): AuditFinding {
  return { rule, severity: severityOf(rule), site, stage, detail }
}

/**
 * Findings by site (configured order, null first), then stage (pipeline order, null first), then
 * rule id (plain string order, the same in every locale).
 */
export function findingOrder(sites: readonly string[]) {
  const siteRank = (site: string | null) => (site === null ? -1 : sites.indexOf(site))
  const stageRank = (stage: AuditFinding['stage']) => (stage === null ? -1 : PIPELINE_STAGES.indexOf(stage))
  return (a: AuditFinding, b: AuditFinding) =>
    siteRank(a.site) - siteRank(b.site) ||
    stageRank(a.stage) - stageRank(b.stage) ||
    (a.rule < b.rule ? -1 : a.rule > b.rule ? 1 : 0)
}
