import type { AuditedEvent } from '../../../schemas/audit.js'
import type { EventRecord } from '../records.js'
import { toIsoUtc } from '../time-window.js'
import type { EventAudit } from './audit-settings.js'

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
