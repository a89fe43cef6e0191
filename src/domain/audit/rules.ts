import type { AuditFinding, AuditRule, AuditSeverity } from '../../../schemas/audit.js'

/** The audit's rules, each a manual check made automatic. */
export const AUDIT_RULES = [
  'stuck',
  'out-of-order',
  'registered-not-in-datatrail',
  'datatrail-not-in-trace',
  'replicated-with-missing-files',
  'file-count-mismatch',
  'heartbeat-error'
] as const

/** `stuck`: late but possibly fine; `contradiction`: two records of the event cannot both be right. */
export const SEVERITIES = ['stuck', 'contradiction'] as const

export const VERDICTS = ['complete', 'in_progress', 'stuck', 'contradiction'] as const

const severityOf = (rule: AuditRule): AuditSeverity => (rule === 'stuck' ? 'stuck' : 'contradiction')

export function finding(rule: AuditRule, site: string | null, stage: AuditFinding['stage'], detail: string): AuditFinding {
  return { rule, severity: severityOf(rule), site, stage, detail }
}
