import type { AuditedEvent } from '../../../schemas/audit.js'
import type { Sites } from '../../vocabulary.js'
import type { EventRecord } from '../records.js'
import type { StageDeadlines } from '../stage-deadlines.js'
import { toIsoUtc } from '../time-window.js'

/** The wire record of an audited event. */
export function auditedEventRecord(
  event: Pick<EventRecord, 'event_no' | 'timestamp' | 'snr' | 'known_source_name'>,
  audit: EventAudit
): AuditedEvent {
  return {
    event_no: event.event_no,
    timestamp_utc: toIsoUtc(event.timestamp),
    snr: event.snr,
    known_source_name: event.known_source_name,
    ...audit
  }
}

/** What an audit is made with besides an event's facts: the sites, the deadlines and the clock. */
export interface AuditSettings {
  /** The configured sites; the first is the primary one. */
  sites: Sites
  deadlines: StageDeadlines
  /** The clock the deadlines are held against, ms since the epoch. */
  now: number
}

/** An event's audit: the sites audited, the verdict and the findings behind it. */
export type EventAudit = Pick<AuditedEvent, 'sites' | 'verdict' | 'findings'>
