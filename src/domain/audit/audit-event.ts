import { classificationIn } from '../events.js'
import { factsOf, type KeptEvent, type KeptFacts } from './kept-facts.js'
import { auditOfReport, reportBody } from './kept-report.js'
import { requestedSites } from './requested-sites.js'
import type { AuditSettings, EventAudit } from './audited-event.js'
import type { AuditedParts } from './site-facts.js'

export type { AuditSettings, EventAudit } from './audited-event.js'

/**
 * One event held against its datatrail, its heartbeats and the clock, from its facts (kept by the
 * store, or made from its records): its report, audited at the settings' clock, as a window read
 * audits a kept report. Only the requested sites are audited; an event that requested none
 * (`sites` empty) has nothing to audit but the classification, and callers that must refuse it
 * (404) can tell by that.
 */
export function auditFacts(facts: KeptFacts, event: Pick<KeptEvent, 'timestamp' | 'requested' | 'tsar_classification'>, settings: AuditSettings): EventAudit {
  return auditOfReport({ ...reportBody(facts, event, settings.sites), event }, settings)
}

/** The audit recomputed from the event's records: the reference the kept facts are checked against. */
export function auditEvent(parts: AuditedParts, settings: AuditSettings): EventAudit {
  const facts = factsOf(0, { ...parts, event: null }, settings.sites)
  const event = {
    timestamp: parts.event.timestamp,
    requested: requestedSites(parts.event.actions, settings.sites),
    tsar_classification: classificationIn(parts.event.tsar_classification)
  }
  return auditFacts(facts, event, settings)
}
