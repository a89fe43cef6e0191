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
import { basebandWhileRewriting, type OutputTextsState, type TextsMadeUpTo } from './output-texts.js'

interface CallbackRowText {
  event_no: number
  timestamp_ms: number
  callback_head: string | null
  output: string | null
  /** Only when the trace has no output text (written by an older version of the service). */
  doc: string | null
}

/** A row of the callbacks while the texts are made again: with what the event's part is made of where its text may not be sent. */
type CallbackRowRewriting = CallbackRowText & { snr: number; known_source_name: string }

type CallbackParameters = { afterTime: number; afterNo: number; end: number; limit: number }

/** Reads across the tables: one event's parts, the baseband-callback scan, and a window's parts. */
export class SqliteViews implements Adapter<StoreViews> {
  private readonly callbacks
  private readonly callbacksRewriting
  private readonly window
  readonly eventParts: (eventNo: number, options?: { heartbeatLimit?: number }) => EventParts

  constructor(
    db: Database.Database,
    private readonly tables: { events: SqliteEvents; traces: SqliteTraces; datatrail: SqliteDatatrail; heartbeats: SqliteHeartbeats },
    private readonly sites: Sites,
    private readonly texts: OutputTextsState
  ) {
    // A range scan of a covering partial index, exactly the rows returned, joined to each trace's
    // output text: both halves of every element are stored text, so nothing is parsed.
    this.callbacks = db.prepare<CallbackParameters, CallbackRowText>(
      `SELECT e.event_no, e.timestamp_ms, e.callback_head, t.output, CASE WHEN t.output IS NULL THEN t.doc END AS doc
       FROM events e LEFT JOIN traces t ON t.event_no = e.event_no
       WHERE e.baseband_requested = 1 AND (e.timestamp_ms, e.event_no) > (@afterTime, @afterNo)
         AND e.timestamp_ms < @end
       ORDER BY e.timestamp_ms, e.event_no LIMIT @limit`
    )
    // While the texts are made again (output-texts.ts): the events of the window by time, each
    // flag, head and trace text taken as stored only where the rewrite has passed its row, made
    // from the record elsewhere. Slower (every event of the window is looked at, not only those
    // flagged), for as long as the rewrite lasts; the statement above keeps its covering index.
    this.callbacksRewriting = db.prepare<CallbackParameters & { eventsMade: number; tracesMade: number }, CallbackRowRewriting>(
      `SELECT e.event_no, e.timestamp_ms, e.snr, e.known_source_name,
              CASE WHEN e.event_no <= @eventsMade THEN e.callback_head END AS callback_head,
              CASE WHEN t.event_no <= @tracesMade THEN t.output END AS output,
              CASE WHEN t.event_no > @tracesMade OR t.output IS NULL THEN t.doc END AS doc
       FROM events e LEFT JOIN traces t ON t.event_no = e.event_no
       WHERE ${basebandWhileRewriting('e.')} = 1 AND (e.timestamp_ms, e.event_no) > (@afterTime, @afterNo)
         AND e.timestamp_ms < @end
       ORDER BY e.timestamp_ms, e.event_no LIMIT @limit`
    )
    // The window's parts: the page of events, then what their facts are made from, with the bounded
    // read of the kept audit (event-records.ts), all in one read transaction (one snapshot).
    this.window = db.transaction(windowEvents(db, new EventRecordsReader(db, sites), texts))
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
    const parameters = { afterTime: position.timestamp, afterNo: position.event_no, end: window.end, limit }
    const made = this.texts.underWay()
    if (made !== null) return this.callbackPageWhileRewriting(parameters, made)
    return this.callbacks.all(parameters).map((row) => {
      // Rows without their texts were written by an older version of the service since this one made them.
      const head = row.callback_head ?? callbackHead(this.tables.events.find(row.event_no)!)
      return { position: { timestamp: row.timestamp_ms, event_no: row.event_no }, json: callbackJson(head, this.traceText(row)) }
    })
  }

  /** The page while the texts are made again: rows the rewrite has not reached are sent as their records say, never as another site's text. */
  private callbackPageWhileRewriting(parameters: CallbackParameters, made: TextsMadeUpTo): OutputRow[] {
    return this.callbacksRewriting.all({ ...parameters, eventsMade: made.events, tracesMade: made.traces }).map((row) => {
      const head = row.callback_head ?? callbackHead({ event_no: row.event_no, snr: row.snr, known_source_name: row.known_source_name, timestamp: row.timestamp_ms })
      return { position: { timestamp: row.timestamp_ms, event_no: row.event_no }, json: callbackJson(head, this.traceText(row)) }
    })
  }

  /** The trace's text: stored, or made from its document where the row holds none that may be sent; null without a trace. */
  private traceText(row: CallbackRowText): string | null {
    return row.output ?? (row.doc === null ? null : traceJson(row.event_no, JSON.parse(row.doc) as TraceRecord, this.sites))
  }
}
