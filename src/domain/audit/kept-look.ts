import type { AuditVerdict, VerdictChange } from '../../../schemas/audit.js'
import { toIsoUtc } from '../time-window.js'
import type { AuditSettings, EventAudit } from './audit-event.js'
import { auditedEventRecord } from './audited-event.js'
import type { KeptFacts } from './kept-facts.js'
import { auditOfReport, reportOf, type KeptReport } from './kept-report.js'

/** What the store keeps to find an event by and tell a change: verdict, stuck stages, next deadline; none outside the audit. */
export interface KeptLook {
  verdict: AuditVerdict | null
  /** ms since the epoch; null when no deadline of an incomplete stage is ahead. */
  due_at: number | null
  /** The stuck stages, as `{site}/{stage}` (`/tsar_classification`), in the audit's order. */
  stuck: string[]
}

export const NOT_AUDITED: KeptLook = { verdict: null, due_at: null, stuck: [] }

const stuckKey = (site: string | null, stage: string | null) => `${site ?? ''}/${stage ?? ''}`

export interface Look {
  look: KeptLook
  report: KeptReport | null
  audit: EventAudit | null
}

/** The look of kept facts at `settings.now`: their report, audited at that clock, and when its next deadline passes. */
export function lookAt(facts: KeptFacts, settings: AuditSettings): Look {
  const report = reportOf(facts, settings.sites)
  if (report === null) return { look: NOT_AUDITED, report, audit: null }
  const audit = auditOfReport(report, settings)
  const stuck = audit.findings.filter((found) => found.rule === 'stuck').map((found) => stuckKey(found.site, found.stage))
  return { look: { verdict: audit.verdict, due_at: nextDeadline(report, settings), stuck }, report, audit }
}

function nextDeadline({ pending, event }: KeptReport, { deadlines, now }: AuditSettings): number | null {
  let next: number | null = null
  for (const [, stage] of pending) {
    const due = event.timestamp + deadlines[stage]
    if (due > now && (next === null || due < next)) next = due
  }
  return next
}

export const sameLook = (a: KeptLook, b: KeptLook) =>
  a.verdict === b.verdict && a.due_at === b.due_at && a.stuck.length === b.stuck.length && a.stuck.every((key, index) => key === b.stuck[index])

/** What the live stream says of a look replacing `before`: a new verdict, stages newly stuck, or moved sites (given `sitesBefore`); null if none. */
export function verdictChange(facts: KeptFacts, before: KeptLook, after: Look, settings: AuditSettings, sitesBefore?: readonly string[]): VerdictChange | null {
  const known = new Set(before.stuck)
  const newlyStuck = after.audit?.findings.filter((found) => found.rule === 'stuck' && !known.has(stuckKey(found.site, found.stage))) ?? []
  const sitesAfter = after.audit?.sites ?? []
  const left = sitesBefore?.filter((site) => !sitesAfter.includes(site)) ?? []
  const sitesMoved = sitesBefore !== undefined && (left.length > 0 || sitesAfter.length !== sitesBefore.length)
  if (before.verdict === after.look.verdict && newlyStuck.length === 0 && !sitesMoved) return null
  const event = facts.event
  const change: VerdictChange = {
    event_no: facts.event_no,
    from: before.verdict,
    to: after.look.verdict,
    at: toIsoUtc(settings.now),
    became_stuck: newlyStuck.map((found) => ({
      site: found.site,
      stage: found.stage!,
      deadline_utc: toIsoUtc(event!.timestamp + settings.deadlines[found.stage!])
    })),
    audit: after.audit === null || event === null ? null : auditedEventRecord({ event_no: facts.event_no, ...event }, after.audit)
  }
  if (left.length > 0) change.left_sites = left
  return change
}
