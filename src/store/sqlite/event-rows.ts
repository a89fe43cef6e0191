import type { EventRecord } from '../../domain/records.js'

/** An event's row as the record reads take it (the stored output texts left out). */
export interface EventRow {
  event_no: number
  timestamp_ms: number
  snr: number
  dm: number | null
  known_source_name: string
  tsar_classification: string | null
  actions: string
  baseband_requested: number
  update_timestamp: number
}

/**
 * The columns of an EventRow, for reads that make records: not the stored output texts, which
 * would double what each row costs to read.
 */
export const EVENT_COLUMNS =
  'event_no, timestamp_ms, snr, dm, known_source_name, tsar_classification, actions, baseband_requested, update_timestamp'

export const toEvent = (row: EventRow): EventRecord => ({
  event_no: row.event_no,
  timestamp: row.timestamp_ms,
  snr: row.snr,
  dm: row.dm,
  known_source_name: row.known_source_name,
  tsar_classification: row.tsar_classification,
  actions: JSON.parse(row.actions) as EventRecord['actions'],
  baseband_requested: row.baseband_requested === 1,
  update_timestamp: row.update_timestamp
})

