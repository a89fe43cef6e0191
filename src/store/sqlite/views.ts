import type Database from 'better-sqlite3'
import { callbackHead, callbackJson, traceJson } from '../../domain/output-forms.js'
import type {
  DatatrailRecord,
  EventParts,
  EventPosition,
  HeartbeatRecord,
  OutputRow,
  TraceRecord,
  TransitionRecord,
  WindowEventParts
} from '../../domain/records.js'
import type { TimeWindow } from '../../domain/time-window.js'
import type { Adapter } from '../guarded-store.js'
import type { StoreViews } from '../port.js'
import type { Sites } from '../../vocabulary.js'
import type { SqliteDatatrail } from './datatrail.js'
import { EVENT_COLUMNS, toEvent, type EventRow } from './event-rows.js'
import type { SqliteEvents } from './events.js'
import type { SqliteHeartbeats } from './heartbeats.js'
import { TRANSITION_COLUMNS, type SqliteTraces } from './traces.js'

interface CallbackRowText {
  event_no: number
  timestamp_ms: number
  callback_head: string | null
  output: string | null
  /** Only when the trace has no output text (written by an older version of the service). */
  doc: string | null
}

/** The event's columns of the window read, from the events table named `e`. */
const EVENT_COLUMNS_OF_E = EVENT_COLUMNS.split(', ').map((column) => `e.${column}`).join(', ')

/** The events of a window page, as event numbers in one parameter: `IN (SELECT value FROM json_each(?))`. */
const IN_PAGE = 'IN (SELECT value FROM json_each(?))'

/** Groups rows by their event: a Map from event_no to its rows, in the order read. */
function byEvent<T>(rows: readonly T[], eventOf: (row: T) => number): Map<number, T[]> {
  const groups = new Map<number, T[]>()
  for (const row of rows) {
    const key = eventOf(row)
    const group = groups.get(key)
    if (group === undefined) groups.set(key, [row])
    else group.push(row)
  }
  return groups
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
    // The window's parts: the page of events with their traces, then each other part of the whole
    // page in one indexed scan, all in one read transaction (one snapshot).
    const pageEvents = db.prepare<{ afterTime: number; afterNo: number; end: number; limit: number }, EventRow & { trace: string | null }>(
      `SELECT ${EVENT_COLUMNS_OF_E}, t.doc AS trace
       FROM events e LEFT JOIN traces t ON t.event_no = e.event_no
       WHERE e.baseband_requested = 1 AND (e.timestamp_ms, e.event_no) > (@afterTime, @afterNo)
         AND e.timestamp_ms < @end
       ORDER BY e.timestamp_ms, e.event_no LIMIT @limit`
    )
    const pageDatatrail = db.prepare<[string], { event_no: number; member: string; doc: string; update_timestamp: number }>(
      `SELECT event_no, member, doc, update_timestamp FROM datatrail WHERE event_no ${IN_PAGE}`
    )
    const pageHeartbeats = db.prepare<[string], { event_no: number; doc: string; update_timestamp: number }>(
      `SELECT event_no, doc, update_timestamp FROM heartbeats WHERE event_no ${IN_PAGE} ORDER BY event_no, heartbeat_id`
    )
    const pageTransitions = db.prepare<[string], TransitionRecord & { event_no: number }>(
      `SELECT event_no, ${TRANSITION_COLUMNS} FROM transitions WHERE event_no ${IN_PAGE} ORDER BY event_no, at, seq`
    )
    this.window = db.transaction((afterTime: number, afterNo: number, end: number, limit: number): WindowEventParts[] => {
      const events = pageEvents.all({ afterTime, afterNo, end, limit })
      if (events.length === 0) return []
      const numbers = JSON.stringify(events.map((event) => event.event_no))
      const datatrail = byEvent(pageDatatrail.all(numbers), (row) => row.event_no)
      const heartbeats = byEvent(pageHeartbeats.all(numbers), (row) => row.event_no)
      const transitions = byEvent(pageTransitions.all(numbers), (row) => row.event_no)
      return events.map((row) => ({
        event: toEvent(row),
        trace: row.trace === null ? null : (JSON.parse(row.trace) as TraceRecord),
        datatrail: (datatrail.get(row.event_no) ?? []).map(
          (item): DatatrailRecord => ({ event_no: item.event_no, member: item.member, value: JSON.parse(item.doc) as DatatrailRecord['value'], update_timestamp: item.update_timestamp })
        ),
        heartbeats: (heartbeats.get(row.event_no) ?? []).map(
          (item): HeartbeatRecord => ({ heartbeat: JSON.parse(item.doc) as HeartbeatRecord['heartbeat'], update_timestamp: item.update_timestamp })
        ),
        transitions: (transitions.get(row.event_no) ?? []).map(({ event_no: _eventNo, ...transition }) => transition)
      }))
    })
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
