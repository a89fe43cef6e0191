import type Database from 'better-sqlite3'
import type { CallbackRow, EventParts, EventPosition, TraceRecord } from '../../domain/records.js'
import type { TimeWindow } from '../../domain/time-window.js'
import type { Adapter } from '../guarded-store.js'
import type { StoreViews } from '../port.js'
import type { SqliteDatatrail } from './datatrail.js'
import type { SqliteEvents } from './events.js'
import type { SqliteHeartbeats } from './heartbeats.js'
import type { SqliteTraces } from './traces.js'

interface CallbackRowText {
  event_no: number
  timestamp_ms: number
  snr: number
  known_source_name: string
  trace: string | null
}

/** Reads across the tables: one event's parts, and the baseband-callback scan. */
export class SqliteViews implements Adapter<StoreViews> {
  private readonly callbacks
  readonly eventParts: (eventNo: number) => EventParts

  constructor(db: Database.Database, tables: { events: SqliteEvents; traces: SqliteTraces; datatrail: SqliteDatatrail; heartbeats: SqliteHeartbeats }) {
    // A range scan of a covering partial index: exactly the rows returned, and only the columns the
    // route outputs (reading the actions text too doubled the time).
    this.callbacks = db.prepare<{ afterTime: number; afterNo: number; end: number; limit: number }, CallbackRowText>(
      `SELECT e.event_no, e.timestamp_ms, e.snr, e.known_source_name, t.doc AS trace
       FROM events e LEFT JOIN traces t ON t.event_no = e.event_no
       WHERE e.baseband_requested = 1 AND (e.timestamp_ms, e.event_no) > (@afterTime, @afterNo)
         AND e.timestamp_ms < @end
       ORDER BY e.timestamp_ms, e.event_no LIMIT @limit`
    )
    // Four index lookups in one read transaction, so the parts come from one snapshot.
    this.eventParts = db.transaction((eventNo: number) => ({
      event: tables.events.find(eventNo),
      trace: tables.traces.find(eventNo),
      datatrail: tables.datatrail.of(eventNo),
      heartbeats: tables.heartbeats.of(eventNo)
    }))
  }

  callbackPage(window: TimeWindow, after: EventPosition | undefined, limit: number): CallbackRow[] {
    const position = after ?? { timestamp: window.start, event_no: -1 }
    return this.callbacks
      .all({ afterTime: position.timestamp, afterNo: position.event_no, end: window.end, limit })
      .map((row) => ({
        event: { event_no: row.event_no, timestamp: row.timestamp_ms, snr: row.snr, known_source_name: row.known_source_name },
        trace: row.trace === null ? null : (JSON.parse(row.trace) as TraceRecord)
      }))
  }
}
