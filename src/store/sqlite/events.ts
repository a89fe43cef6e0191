import type Database from 'better-sqlite3'
import { eventJson } from '../../domain/output-forms.js'
import type { EventPageQuery, EventRecord, OutputRow } from '../../domain/records.js'
import { EVENT_COLUMNS, keptColumnsOf, toEvent, type EventRow } from './event-rows.js'
import type { Sites } from '../../vocabulary.js'
import type { Adapter } from '../guarded-store.js'
import type { EventCollection } from '../port.js'
import { applyEvent } from '../../domain/audit/kept-facts.js'
import type { RecordWrites } from './record-writes.js'
import { basebandWhileRewriting, type OutputTextsState } from './output-texts.js'

/** The row of an event, with its kept columns: the baseband flag is kept state, made from the actions, not a second record of them. */
const toRow = (event: EventRecord, sites: Sites): EventRow & { output: string; callback_head: string } => ({
  event_no: event.event_no,
  timestamp_ms: event.timestamp,
  snr: event.snr,
  dm: event.dm,
  known_source_name: event.known_source_name,
  tsar_classification: event.tsar_classification,
  actions: JSON.stringify(event.actions),
  update_timestamp: event.update_timestamp,
  ...keptColumnsOf(event, sites)
})

interface PageRow {
  timestamp_ms: number
  event_no: number
  output: string | null
}

const FILTERS: Record<string, string> = {
  minSnr: 'snr >= @minSnr',
  maxSnr: 'snr <= @maxSnr',
  knownSourceName: 'known_source_name = @knownSourceName',
  basebandRequested: 'baseband_requested = @basebandRequested'
}

/** While a rewrite of the texts is under way (output-texts.ts): the stored text and flag only of rows it passed; separate statements, so the usual ones keep their plans. */
const REWRITING_FILTERS: Record<string, string> = { ...FILTERS, basebandRequested: `${basebandWhileRewriting('')} = @basebandRequested` }
const REWRITING_COLUMNS = `CASE WHEN event_no <= @eventsMade THEN output END AS output, ${EVENT_COLUMNS}`

/** Events: bulk upsert, lookup and keyset pages. */
export class SqliteEvents implements Adapter<EventCollection> {
  private readonly statements
  readonly upsert: (events: readonly EventRecord[]) => number
  /** Page statements by the shape of their WHERE clause: at most 32 of them, and 32 more while the texts are made again. */
  private readonly pageStatements = new Map<string, Database.Statement<Record<string, unknown>, PageRow>>()

  constructor(
    private readonly db: Database.Database,
    private readonly sites: Sites,
    records: RecordWrites,
    private readonly texts: OutputTextsState
  ) {
    this.upsert = records.transaction((events: readonly EventRecord[]) => {
      for (const event of events) this.statements.upsert(toRow(event, sites), event)
      return events.length
    })
    this.statements = {
      upsert: records.statement<ReturnType<typeof toRow>, EventRecord>(
        `INSERT INTO events (event_no, timestamp_ms, snr, dm, known_source_name, tsar_classification, actions,
                             baseband_requested, update_timestamp, output, callback_head)
         VALUES (@event_no, @timestamp_ms, @snr, @dm, @known_source_name, @tsar_classification, @actions,
                 @baseband_requested, @update_timestamp, @output, @callback_head)
         ON CONFLICT (event_no) DO UPDATE SET
           timestamp_ms = excluded.timestamp_ms, snr = excluded.snr, dm = excluded.dm,
           known_source_name = excluded.known_source_name, tsar_classification = excluded.tsar_classification,
           actions = excluded.actions, baseband_requested = excluded.baseband_requested,
           update_timestamp = excluded.update_timestamp, output = excluded.output, callback_head = excluded.callback_head`,
        (row, _result, event) => [event.event_no, (facts) => applyEvent(facts, { ...event, baseband_requested: row.baseband_requested === 1 }, sites)]
      ),
      find: db.prepare<[number], EventRow>(`SELECT ${EVENT_COLUMNS} FROM events WHERE event_no = ?`),
      // The numbers as one JSON array: one statement whatever their count.
      findMany: db.prepare<[string], EventRow>(`SELECT ${EVENT_COLUMNS} FROM events WHERE event_no IN (SELECT value FROM json_each(?))`)
    }
  }

  find(eventNo: number): EventRecord | null {
    const row = this.statements.find.get(eventNo)
    return row === undefined ? null : toEvent(row)
  }

  findMany(eventNos: readonly number[]): EventRecord[] {
    return this.statements.findMany.all(JSON.stringify(eventNos)).map(toEvent)
  }

  page(query: EventPageQuery): OutputRow[] {
    const ascending = query.order === 'asc'
    // Before the first page the position is just outside the window: event_no is never -1.
    const position = query.after ?? { timestamp: ascending ? query.window.start : query.window.end, event_no: -1 }
    const filters = {
      minSnr: query.minSnr,
      maxSnr: query.maxSnr,
      knownSourceName: query.knownSourceName,
      basebandRequested: query.basebandRequested === undefined ? undefined : query.basebandRequested ? 1 : 0
    }
    const parameters: Record<string, unknown> = {
      afterTime: position.timestamp,
      afterNo: position.event_no,
      bound: ascending ? query.window.end : query.window.start,
      limit: query.limit
    }
    for (const [name, value] of Object.entries(filters)) if (value !== undefined) parameters[name] = value
    const used = Object.keys(filters).filter((name) => parameters[name] !== undefined)
    const made = this.texts.underWay()
    const rows = this.pageStatement(ascending, used, made !== null).all(made === null ? parameters : { ...parameters, eventsMade: made.events })
    return rows.map((row) => ({
      position: { timestamp: row.timestamp_ms, event_no: row.event_no },
      // No text: an older version wrote the row since this one made the texts, or a rewrite (whose text is another site's) has not reached it.
      json: row.output ?? eventJson(made === null ? this.find(row.event_no)! : toEvent(row as PageRow & EventRow), this.sites)
    }))
  }

  private pageStatement(ascending: boolean, filters: readonly string[], rewriting = false) {
    const conditions = ascending
      ? ['(timestamp_ms, event_no) > (@afterTime, @afterNo)', 'timestamp_ms < @bound']
      : ['(timestamp_ms, event_no) < (@afterTime, @afterNo)', 'timestamp_ms >= @bound']
    for (const name of filters) conditions.push((rewriting ? REWRITING_FILTERS : FILTERS)[name]!)
    const direction = ascending ? 'ASC' : 'DESC'
    const sql = `SELECT timestamp_ms, event_no, ${rewriting ? REWRITING_COLUMNS : 'output'} FROM events WHERE ${conditions.join(' AND ')}
                 ORDER BY timestamp_ms ${direction}, event_no ${direction} LIMIT @limit`
    if (!this.pageStatements.has(sql)) this.pageStatements.set(sql, this.db.prepare<Record<string, unknown>, PageRow>(sql))
    return this.pageStatements.get(sql)!
  }
}
