import type { EventRecord, TraceRecord, TransitionRecord, DatatrailRecord, HeartbeatRecord } from '../records.js'
import { classificationIn } from '../events.js'
import { factsOf, type KeptEvent, type KeptFacts } from './kept-facts.js'
import { auditOfReport, reportBody } from './kept-report.js'
import { requestedSites } from './requested-sites.js'
import type { AuditSettings, EventAudit } from './audited-event.js'

export type { AuditSettings, EventAudit } from './audited-event.js'

/** One event's records as stored, whoever wrote them. */
export interface AuditedParts {
  event: Pick<EventRecord, 'timestamp' | 'actions' | 'tsar_classification'>
  trace: TraceRecord | null
  datatrail: readonly Pick<DatatrailRecord, 'member' | 'value'>[]
  heartbeats: readonly Pick<HeartbeatRecord, 'heartbeat'>[]
  /** The trace's recorded transitions, in any order. */
  transitions: readonly Pick<TransitionRecord, 'key' | 'to' | 'at'>[]
}

/**
 * One event's facts audited at the settings' clock, as a window read audits a kept report. Only the
 * requested sites are audited: callers that must refuse an event that requested none (404) can tell by `sites`.
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
