import type { AuditedEvent } from '../../../schemas/audit.js'
import type { Sites } from '../../vocabulary.js'
import type { StageDeadlines } from '../stage-deadlines.js'
import { completedBeforeEventFindings } from './completed-before-event.js'
import { datatrailFindings } from './datatrail-rules.js'
import { heartbeatFindings } from './heartbeat-rules.js'
import { findingOrder } from './order.js'
import { outOfOrderFindings } from './out-of-order.js'
import { eventFacts, everyStageComplete, type AuditedParts, type SiteFacts } from './site-facts.js'
import { stuckFindings } from './stuck.js'
import { verdictOf } from './verdict.js'

export interface AuditSettings {
  /** The configured sites; the first is the primary one. */
  sites: Sites
  deadlines: StageDeadlines
  /** The clock the deadlines are held against, ms since the epoch. */
  now: number
}

export type EventAudit = Pick<AuditedEvent, 'sites' | 'verdict' | 'findings'>

const siteFindings = (site: SiteFacts) => [...outOfOrderFindings(site), ...datatrailFindings(site), ...heartbeatFindings(site)]

/**
 * One event held against its datatrail, its heartbeats and the clock. Only the requested sites are
 * audited; an event that requested none (`sites` empty) has nothing to audit but the classification,
 * and callers that must refuse it (404) can tell by that.
 */
export function auditEvent(parts: AuditedParts, settings: AuditSettings): EventAudit {
  const facts = eventFacts(parts, settings.sites)
  const findings = [
    ...stuckFindings(facts, settings.now - parts.event.timestamp, settings.deadlines),
    ...completedBeforeEventFindings(facts, parts.event.timestamp),
    ...facts.sites.flatMap(siteFindings)
  ].sort(findingOrder(settings.sites.names))
  return {
    sites: facts.sites.map((site) => site.site),
    verdict: verdictOf(findings, everyStageComplete(facts)),
    findings
  }
}
