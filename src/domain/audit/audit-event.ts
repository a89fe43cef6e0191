import type { EventRecord } from '../records.js'
import { classificationIn } from '../events.js'
import { factsOf, type EventRecords, type KeptEvent, type KeptFacts } from './kept-facts.js'
import { auditOfReport, reportBody } from './kept-report.js'
import { requestedSites } from './requested-sites.js'
import type { AuditSettings, EventAudit } from './audited-event.js'

export type { AuditSettings, EventAudit } from './audited-event.js'

/** One event's records as stored, whoever wrote them; transitions in any order. */
export type AuditedParts = Omit<EventRecords, 'event'> & { event: Pick<EventRecord, 'timestamp' | 'actions' | 'tsar_classification'> }

/** One event's facts audited at the settings' clock; `sites` empty tells a caller that must refuse such an event (404). */
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
