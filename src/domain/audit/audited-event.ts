import type { AuditedEvent } from '../../../schemas/audit.js'
import type { Sites } from '../../vocabulary.js'
import type { EventRecord } from '../records.js'
import type { StageDeadlines } from '../stage-deadlines.js'
import { toIsoUtc } from '../time-window.js'

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

export interface AuditSettings {
  /** The configured sites; the first is the primary one. */
  sites: Sites
  deadlines: StageDeadlines
  /** The clock the deadlines are held against, ms since the epoch. */
  now: number
}

export type EventAudit = Pick<AuditedEvent, 'sites' | 'verdict' | 'findings'>
