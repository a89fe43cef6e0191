import type { AuditFinding, AuditRule, AuditSeverity } from '../../../schemas/audit.js'

const severityOf = (rule: AuditRule): AuditSeverity => (rule === 'stuck' ? 'stuck' : 'contradiction')

export function finding(rule: AuditRule, site: string | null, stage: AuditFinding['stage'], detail: string): AuditFinding {
  return { rule, severity: severityOf(rule), site, stage, detail }
}
