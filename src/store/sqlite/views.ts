import type Database from 'better-sqlite3'
import { callbackHead, callbackJson, traceJson } from '../../domain/output-forms.js'
import type { EventParts, EventPosition, OutputRow, TraceRecord, WindowEventParts } from '../../domain/records.js'
import type { TimeWindow } from '../../domain/time-window.js'
import type { Adapter } from '../guarded-store.js'
import type { StoreViews } from '../port.js'
import type { Sites } from '../../vocabulary.js'
import type { SqliteDatatrail, SqliteHeartbeats } from './collections.js'
import { EventRecordsReader } from './event-records.js'
import type { SqliteEvents } from './events.js'
import type { SqliteTraces } from './traces.js'
import { basebandWhileRewriting, type OutputTextsState } from './output-texts.js'

interface CallbackRow {
  event_no: number
  timestamp_ms: number
  callback_head: string | null
  output: string | null
  /** Only where the trace has no output text that may be sent. */
  doc: string | null
}

/** While the texts are made again: with what the event's part is made of where its text may not be sent. */
type CallbackRowRewriting = CallbackRow & { snr: number; known_source_name: string }

type Parameters = { afterTime: number; afterNo: number; end: number; limit: number }
type Position = { time: number; event_no: number }

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
    // A range scan of a covering partial index joined to each trace's output text: nothing is parsed.
    this.callbacks = db.prepare<Parameters, CallbackRow>(
      `SELECT e.event_no, e.timestamp_ms, e.callback_head, t.output, CASE WHEN t.output IS NULL THEN t.doc END AS doc
       FROM events e LEFT JOIN traces t ON t.event_no = e.event_no
       WHERE e.baseband_requested = 1 AND (e.timestamp_ms, e.event_no) > (@afterTime, @afterNo)
         AND e.timestamp_ms < @end
       ORDER BY e.timestamp_ms, e.event_no LIMIT @limit`
    )
    // While the texts are made again, the stored flag, head and trace text only where the rewrite passed: slower (each event is looked at), so kept apart.
    this.callbacksRewriting = db.prepare<Parameters & { eventsMade: number; tracesMade: number }, CallbackRowRewriting>(
      `SELECT e.event_no, e.timestamp_ms, e.snr, e.known_source_name,
              CASE WHEN e.event_no <= @eventsMade THEN e.callback_head END AS callback_head,
              CASE WHEN t.event_no <= @tracesMade THEN t.output END AS output,
              CASE WHEN t.event_no > @tracesMade OR t.output IS NULL THEN t.doc END AS doc
       FROM events e LEFT JOIN traces t ON t.event_no = e.event_no
       WHERE ${basebandWhileRewriting('e.')} = 1 AND (e.timestamp_ms, e.event_no) > (@afterTime, @afterNo)
         AND e.timestamp_ms < @end
       ORDER BY e.timestamp_ms, e.event_no LIMIT @limit`
    )
    this.window = db.transaction(windowEvents(db, new EventRecordsReader(db, sites), texts))
    // One read transaction: the parts come from one snapshot.
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
    const rows: (CallbackRow | CallbackRowRewriting)[] =
      made === null ? this.callbacks.all(parameters) : this.callbacksRewriting.all({ ...parameters, eventsMade: made.events, tracesMade: made.traces })
    return rows.map((row) => {
      // No head: an older version wrote the row since this one made the texts, or a rewrite (whose text is another site's) has not reached it.
      const head =
        row.callback_head ??
        callbackHead('snr' in row ? { event_no: row.event_no, snr: row.snr, known_source_name: row.known_source_name, timestamp: row.timestamp_ms } : this.tables.events.find(row.event_no)!)
      const trace = row.output ?? (row.doc === null ? null : traceJson(row.event_no, JSON.parse(row.doc) as TraceRecord, this.sites))
      return { position: { timestamp: row.timestamp_ms, event_no: row.event_no }, json: callbackJson(head, trace) }
    })
  }
}

const compare = (a: Position, b: Position) => a.time - b.time || a.event_no - b.event_no

/**
 * A page of the window's events in the audit with what their facts are made from, in (event time,
 * event_no) order, inside the caller's read transaction. Two index ranges, the flagged events and
 * the kept audits, differ only after a hand edit: the records (the actions) say whether an event is
 * in the audit. Past the last row of a range that filled its page that range may hold more, so the
 * page stops there. Mid-rewrite, a flag not reached is made from the actions.
 */
function windowEvents(db: Database.Database, records: EventRecordsReader, texts: OutputTextsState) {
  const flaggedSql = (flag: string) =>
    `SELECT event_no, timestamp_ms AS time FROM events
     WHERE ${flag} = 1 AND (timestamp_ms, event_no) > (@afterTime, @afterNo) AND timestamp_ms < @end
     ORDER BY timestamp_ms, event_no LIMIT @limit`
  const flagged = db.prepare<Parameters, { event_no: number; time: number }>(flaggedSql('baseband_requested'))
  const flaggedRewriting = db.prepare<Parameters & { eventsMade: number }, { event_no: number; time: number }>(flaggedSql(basebandWhileRewriting('')))
  const kept = db.prepare<Parameters, { event_no: number; time: number }>(
    `SELECT event_no, event_time AS time FROM audits
     WHERE (event_time, event_no) > (@afterTime, @afterNo) AND event_time < @end
     ORDER BY event_time, event_no LIMIT @limit`
  )
  return (afterTime: number, afterNo: number, end: number, limit: number): WindowEventParts[] => {
    const page: WindowEventParts[] = []
    for (let position: Position = { time: afterTime, event_no: afterNo }; ; ) {
      const wanted = limit - page.length
      const parameters = { afterTime: position.time, afterNo: position.event_no, end, limit: wanted }
      const made = texts.underWay()
      const listed = made === null ? flagged.all(parameters) : flaggedRewriting.all({ ...parameters, eventsMade: made.events })
      const ranges = [listed, kept.all(parameters)]
      const horizon = ranges
        .filter((rows) => rows.length === wanted)
        .map((rows) => rows.at(-1)!)
        .reduce<Position | null>((nearest, last) => (nearest === null || compare(last, nearest) < 0 ? last : nearest), null)
      const eventNos = [...new Set(ranges.flat().map((row) => row.event_no))]
      const read = records.of(eventNos)
      const found: WindowEventParts[] = []
      for (const eventNo of eventNos) {
        const { event, ...parts } = read.get(eventNo)!
        if (event === null || !event.baseband_requested || event.timestamp >= end) continue
        const at = { time: event.timestamp, event_no: eventNo }
        if (compare(at, position) <= 0 || (horizon !== null && compare(at, horizon) > 0)) continue
        found.push({ ...parts, event })
      }
      found.sort((a, b) => a.event.timestamp - b.event.timestamp || a.event.event_no - b.event.event_no)
      page.push(...found.slice(0, wanted))
      if (horizon === null || page.length === limit) return page
      position = horizon
    }
  }
}
