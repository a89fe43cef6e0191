import type { AuditedEvent } from '../../../schemas/audit.js'
import type { Sites } from '../../vocabulary.js'
import type { StageDeadlines } from '../stage-deadlines.js'
import { completedBeforeEventFindings } from './completed-before-event.js'
import { datatrailFindings } from './datatrail-rules.js'
import { heartbeatFindings } from './heartbeat-rules.js'
import { factsOf, type KeptEvent, type KeptFacts } from './kept-facts.js'
import { findingOrder } from './order.js'
import { outOfOrderFindings } from './out-of-order.js'
import { requestedSites } from './requested-sites.js'
import { eventFacts, everyStageComplete, type AuditedParts, type EventFacts, type SiteFacts } from './site-facts.js'
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
 * One event held against its datatrail, its heartbeats and the clock, from its facts (kept by the
 * store, or made from its records). Only the requested sites are audited; an event that requested
 * none (`sites` empty) has nothing to audit but the classification, and callers that must refuse it
 * (404) can tell by that.
 */
export function auditFacts(facts: KeptFacts, event: Pick<KeptEvent, 'timestamp' | 'requested'>, settings: AuditSettings): EventAudit {
  const audited = eventFacts(facts, event, settings.sites)
  const findings = [...stuckFindings(audited, settings.now - event.timestamp, settings.deadlines), ...contradictionFindings(audited, event.timestamp)].sort(
    findingOrder(settings.sites.names)
  )
  return {
    sites: audited.sites.map((site) => site.site),
    verdict: verdictOf(findings, everyStageComplete(audited)),
    findings
  }
}

/** Every finding that does not depend on the clock: all but `stuck`, unordered. */
export const contradictionFindings = (audited: EventFacts, eventTime: number) => [
  ...completedBeforeEventFindings(audited, eventTime),
  ...audited.sites.flatMap(siteFindings)
]

/** The audit recomputed from the event's records: the reference the kept facts are checked against. */
export function auditEvent(parts: AuditedParts, settings: AuditSettings): EventAudit {
  const facts = factsOf(0, { ...parts, event: null }, settings.sites)
  return auditFacts(facts, { timestamp: parts.event.timestamp, requested: requestedSites(parts.event.actions, settings.sites) }, settings)
}
