import type Database from 'better-sqlite3'
import type { TimeWindow } from '../../domain/time-window.js'
import type { CallbackRow, EventListQuery, EventPosition, StoredEvent } from '../port.js'

interface EventRow {
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

export const toEvent = (row: EventRow): StoredEvent => ({
  event_no: row.event_no,
  timestamp: row.timestamp_ms,
  snr: row.snr,
  dm: row.dm,
  known_source_name: row.known_source_name,
  tsar_classification: row.tsar_classification,
  actions: JSON.parse(row.actions),
  baseband_requested: row.baseband_requested === 1,
  update_timestamp: row.update_timestamp
})

const toRow = (event: StoredEvent): EventRow => ({
  event_no: event.event_no,
  timestamp_ms: event.timestamp,
  snr: event.snr,
  dm: event.dm,
  known_source_name: event.known_source_name,
  tsar_classification: event.tsar_classification,
  actions: JSON.stringify(event.actions),
  baseband_requested: event.baseband_requested ? 1 : 0,
  update_timestamp: event.update_timestamp
})

/** Events: bulk upsert, lookup, keyset pages and the baseband-callback scan. */
export class SqliteEvents {
  private readonly statements
  /** listEvents statements by the shape of their WHERE clause: at most 32 of them. */
  private readonly listStatements = new Map<string, Database.Statement<Record<string, unknown>, EventRow>>()

  constructor(private readonly db: Database.Database) {
    this.statements = {
      upsert: db.prepare<EventRow>(
        `INSERT INTO events (event_no, timestamp_ms, snr, dm, known_source_name, tsar_classification, actions,
                             baseband_requested, update_timestamp)
         VALUES (@event_no, @timestamp_ms, @snr, @dm, @known_source_name, @tsar_classification, @actions,
                 @baseband_requested, @update_timestamp)
         ON CONFLICT (event_no) DO UPDATE SET
           timestamp_ms = excluded.timestamp_ms, snr = excluded.snr, dm = excluded.dm,
           known_source_name = excluded.known_source_name, tsar_classification = excluded.tsar_classification,
           actions = excluded.actions, baseband_requested = excluded.baseband_requested,
           update_timestamp = excluded.update_timestamp`
      ),
      find: db.prepare<[number], EventRow>('SELECT * FROM events WHERE event_no = ?'),
      // A range scan of a covering partial index: exactly the rows returned, and only the columns the
      // route outputs (reading the actions text too doubled the time).
      callbacks: db.prepare<
        { afterTime: number; afterNo: number; end: number; limit: number },
        Pick<EventRow, 'event_no' | 'timestamp_ms' | 'snr' | 'known_source_name'> & { trace: string | null }
      >(
        `SELECT e.event_no, e.timestamp_ms, e.snr, e.known_source_name, t.doc AS trace
         FROM events e LEFT JOIN traces t ON t.event_no = e.event_no
         WHERE e.baseband_requested = 1 AND (e.timestamp_ms, e.event_no) > (@afterTime, @afterNo)
           AND e.timestamp_ms < @end
         ORDER BY e.timestamp_ms, e.event_no LIMIT @limit`
      )
    }
  }

  upsert(events: StoredEvent[]): number {
    this.db.transaction(() => {
      for (const event of events) this.statements.upsert.run(toRow(event))
    })()
    return events.length
  }

  find(eventNo: number): StoredEvent | null {
    const row = this.statements.find.get(eventNo)
    return row === undefined ? null : toEvent(row)
  }

  list(query: EventListQuery): StoredEvent[] {
    const ascending = query.order === 'asc'
    // Before the first page the position is just outside the window: event_no is never -1.
    const position = query.after ?? { timestamp: ascending ? query.window.start : query.window.end, event_no: -1 }
    const filters = {
      minSnr: query.minSnr,
      maxSnr: query.maxSnr,
      knownSourceName: query.knownSourceName,
      basebandRequested: query.basebandRequested === undefined ? undefined : query.basebandRequested ? 1 : 0
    }
    const statement = this.listStatement(ascending, filters)
    const parameters: Record<string, unknown> = {
      afterTime: position.timestamp,
      afterNo: position.event_no,
      bound: ascending ? query.window.end : query.window.start,
      limit: query.limit
    }
    for (const [name, value] of Object.entries(filters)) if (value !== undefined) parameters[name] = value
    return statement.all(parameters).map(toEvent)
  }

  private listStatement(ascending: boolean, filters: Record<string, unknown>) {
    const conditions = ascending
      ? ['(timestamp_ms, event_no) > (@afterTime, @afterNo)', 'timestamp_ms < @bound']
      : ['(timestamp_ms, event_no) < (@afterTime, @afterNo)', 'timestamp_ms >= @bound']
    const sqlFor: Record<string, string> = {
      minSnr: 'snr >= @minSnr',
      maxSnr: 'snr <= @maxSnr',
      knownSourceName: 'known_source_name = @knownSourceName',
      basebandRequested: 'baseband_requested = @basebandRequested'
    }
    for (const [name, value] of Object.entries(filters)) if (value !== undefined) conditions.push(sqlFor[name]!)
    const direction = ascending ? 'ASC' : 'DESC'
    const sql = `SELECT * FROM events WHERE ${conditions.join(' AND ')}
                 ORDER BY timestamp_ms ${direction}, event_no ${direction} LIMIT @limit`
    let statement = this.listStatements.get(sql)
    if (statement === undefined) {
      statement = this.db.prepare<Record<string, unknown>, EventRow>(sql)
      this.listStatements.set(sql, statement)
    }
    return statement
  }

  callbackPage(window: TimeWindow, after: EventPosition | undefined, limit: number): CallbackRow[] {
    const position = after ?? { timestamp: window.start, event_no: -1 }
    return this.statements.callbacks
      .all({ afterTime: position.timestamp, afterNo: position.event_no, end: window.end, limit })
      .map((row) => ({
        event: { event_no: row.event_no, timestamp: row.timestamp_ms, snr: row.snr, known_source_name: row.known_source_name },
        trace: row.trace === null ? null : JSON.parse(row.trace)
      }))
  }
}
