import { eventForms } from '../../domain/output-forms.js'
import type { EventRecord } from '../../domain/records.js'
import { isUnreadableContent } from '../../kept-audit/kept-check.js'
import type { Sites } from '../../vocabulary.js'

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

/** The columns of an EventRow: not the stored output texts, which would double what each row costs to read. */
export const EVENT_COLUMNS =
  'event_no, timestamp_ms, snr, dm, known_source_name, tsar_classification, actions, baseband_requested, update_timestamp'

/** An EventRow read as an array (better-sqlite3's `raw`): for reads of many rows, as it makes an object per row at twice the cost. */
export type EventTuple = [number, number, number, number | null, string, string | null, string, number, number]

/** The EventRow of a tuple that begins with EVENT_COLUMNS (what follows them is left out). */
export const fromTuple = ([event_no, timestamp_ms, snr, dm, known_source_name, tsar_classification, actions, baseband_requested, update_timestamp]: readonly [
  ...EventTuple,
  ...unknown[]
]): EventRow => ({
  event_no,
  timestamp_ms,
  snr,
  dm,
  known_source_name,
  tsar_classification,
  actions,
  baseband_requested,
  update_timestamp
})

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

/**
 * The columns kept beside an event's record, as every write, the texts' rewrite
 * (output-texts.ts) and the verifier (kept-texts.ts) make them: the texts the window routes
 * send, and whether it asks for baseband data, from its actions.
 */
export const keptColumnsOf = (event: EventRecord, sites: Sites) => {
  const { json, head, baseband } = eventForms(event, sites)
  return { output: json, callback_head: head, baseband_requested: baseband ? 1 : 0 }
}

/** `make`'s result, or null when the row's record cannot be read (not JSON, another shape): the audit's check reports it; no rewrite or check stops. */
export function readable<T>(make: () => T): T | null {
  try {
    return make()
  } catch (error) {
    if (!isUnreadableContent(error)) throw error
    return null
  }
}
