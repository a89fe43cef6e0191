import type Database from 'better-sqlite3'
import { callbackHead, callbackJson, traceJson } from '../../domain/output-forms.js'
import type { EventParts, EventPosition, OutputRow, TraceRecord, WindowEventParts } from '../../domain/records.js'
import type { TimeWindow } from '../../domain/time-window.js'
import type { Adapter } from '../guarded-store.js'
import type { StoreViews } from '../port.js'
import type { Sites } from '../../vocabulary.js'
import type { SqliteDatatrail } from './datatrail.js'
import { EventRecordsReader } from './event-records.js'
import { windowEvents } from './window-events.js'
import type { SqliteEvents } from './events.js'
import type { SqliteHeartbeats } from './heartbeats.js'
import type { SqliteTraces } from './traces.js'

interface CallbackRowText {
  event_no: number
  timestamp_ms: number
  callback_head: string | null
  output: string | null
  /** Only when the trace has no output text (written by an older version of the service). */
  doc: string | null
}

/** Reads across the tables: one event's parts, the baseband-callback scan, and a window's parts. */
export class SqliteViews implements Adapter<StoreViews> {
  private readonly callbacks
  private readonly window
  readonly eventParts: (eventNo: number, options?: { heartbeatLimit?: number }) => EventParts

  constructor(
    db: Database.Database,
    private readonly tables: { events: SqliteEvents; traces: SqliteTraces; datatrail: SqliteDatatrail; heartbeats: SqliteHeartbeats },
    private readonly sites: Sites
  ) {
    // A range scan of a covering partial index, exactly the rows returned, joined to each trace's
    // output text: both halves of every element are stored text, so nothing is parsed.
    this.callbacks = db.prepare<{ afterTime: number; afterNo: number; end: number; limit: number }, CallbackRowText>(
      `SELECT e.event_no, e.timestamp_ms, e.callback_head, t.output, CASE WHEN t.output IS NULL THEN t.doc END AS doc
       FROM events e LEFT JOIN traces t ON t.event_no = e.event_no
       WHERE e.baseband_requested = 1 AND (e.timestamp_ms, e.event_no) > (@afterTime, @afterNo)
         AND e.timestamp_ms < @end
       ORDER BY e.timestamp_ms, e.event_no LIMIT @limit`
    )
    // The window's parts: the page of events, then what their facts are made from, with the bounded
    // read of the kept audit (event-records.ts), all in one read transaction (one snapshot).
    this.window = db.transaction(windowEvents(db, new EventRecordsReader(db, sites)))
    // Four index lookups in one read transaction, so the parts come from one snapshot.
    this.eventParts = db.transaction((eventNo: number, { heartbeatLimit }: { heartbeatLimit?: number } = {}) => {
      // SQLite reads LIMIT -1 as no limit.
      const heartbeats = tables.heartbeats.readPage(eventNo, null, heartbeatLimit ?? -1)
      return {
        event: tables.events.find(eventNo),
        trace: tables.traces.find(eventNo),
        datatrail: tables.datatrail.of(eventNo),
        heartbeats: heartbeats.heartbeats,
        heartbeatTotal: heartbeats.total,
        heartbeatsUpdated: heartbeats.latestUpdate
      }
    })
  }

  windowPage(window: TimeWindow, after: EventPosition | undefined, limit: number): WindowEventParts[] {
    const position = after ?? { timestamp: window.start, event_no: -1 }
    return this.window(position.timestamp, position.event_no, window.end, limit)
  }

  callbackPage(window: TimeWindow, after: EventPosition | undefined, limit: number): OutputRow[] {
    const position = after ?? { timestamp: window.start, event_no: -1 }
    return this.callbacks.all({ afterTime: position.timestamp, afterNo: position.event_no, end: window.end, limit }).map((row) => {
      // Rows without their texts were written by an older version of the service since this one made them.
      const head = row.callback_head ?? callbackHead(this.tables.events.find(row.event_no)!)
      const trace = row.output ?? (row.doc === null ? null : traceJson(row.event_no, JSON.parse(row.doc) as TraceRecord, this.sites))
      return { position: { timestamp: row.timestamp_ms, event_no: row.event_no }, json: callbackJson(head, trace) }
    })
  }
}
