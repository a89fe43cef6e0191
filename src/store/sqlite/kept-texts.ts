import type Database from 'better-sqlite3'
import { outputSignature, traceJson } from '../../domain/output-forms.js'
import type { TraceRecord } from '../../domain/records.js'
import type { Sites } from '../../vocabulary.js'
import type { KeptColumn, KeptColumnRepair } from '../../kept-audit/storage.js'
import { EVENT_COLUMNS, fromTuple, keptColumnsOf, readable, toEvent, type EventRow, type EventTuple } from './event-rows.js'

type StoredEvent = EventRow & { output: string | null; callback_head: string | null }
type StoredEventTuple = [...EventTuple, string | null, string | null]
const storedEvent = (tuple: StoredEventTuple): StoredEvent => Object.assign(fromTuple(tuple), { output: tuple[9], callback_head: tuple[10] })
type StoredTrace = { event_no: number; doc: string; output: string | null }

/**
 * The columns kept beside the records (keptColumnsOf, a trace's output text), held to them and
 * repaired by the verifier: a hand edit or another program's UPDATE would be served for good. A
 * NULL text (an older release's row) is not wrong. Unchecked while made for other sites.
 */
export class SqliteKeptTexts {
  private readonly statements
  private readonly signature: string

  constructor(
    private readonly db: Database.Database,
    private readonly sites: Sites
  ) {
    this.signature = outputSignature(sites)
    const TEXT_COLUMNS = `${EVENT_COLUMNS}, output, callback_head`
    this.statements = {
      made: db.prepare<[], string>(`SELECT value FROM settings WHERE name = 'output_texts'`).pluck(),
      eventsIn: db.prepare<[number, number], StoredEventTuple>(`SELECT ${TEXT_COLUMNS} FROM events WHERE event_no > ? AND event_no <= ? ORDER BY event_no`).raw(),
      tracesIn: db.prepare<[number, number], StoredTrace>('SELECT event_no, doc, output FROM traces WHERE event_no > ? AND event_no <= ? ORDER BY event_no'),
      eventsOf: db.prepare<[string], StoredEvent>(`SELECT ${TEXT_COLUMNS} FROM events WHERE event_no IN (SELECT value FROM json_each(?))`),
      tracesOf: db.prepare<[string], StoredTrace>('SELECT event_no, doc, output FROM traces WHERE event_no IN (SELECT value FROM json_each(?))'),
      event: db.prepare<[number], StoredEvent>(`SELECT ${TEXT_COLUMNS} FROM events WHERE event_no = ?`),
      trace: db.prepare<[number], StoredTrace>('SELECT event_no, doc, output FROM traces WHERE event_no = ?'),
      setEvent: db.prepare<{ event_no: number; output: string | null; callback_head: string | null; baseband_requested: number }>(
        'UPDATE events SET output = @output, callback_head = @callback_head, baseband_requested = @baseband_requested WHERE event_no = @event_no'
      ),
      setTrace: db.prepare<[string | null, number]>('UPDATE traces SET output = ? WHERE event_no = ?')
    }
  }

  /** The kept columns of the events after `after` up to `upTo`, every event there: repaired where they differ (`repair`), and named. */
  recheckRange(after: number, upTo: number, repair = true): KeptColumnRepair[] {
    return this.recheck(() => ({ events: this.statements.eventsIn.all(after, upTo).map(storedEvent), traces: this.statements.tracesIn.all(after, upTo) }), repair)
  }

  /** The same, of these events. */
  recheckEvents(eventNos: readonly number[], repair = true): KeptColumnRepair[] {
    if (eventNos.length === 0) return []
    const list = JSON.stringify(eventNos)
    return this.recheck(() => ({ events: this.statements.eventsOf.all(list), traces: this.statements.tracesOf.all(list) }), repair)
  }

  /** Finds what differs with no write lock held, then repairs each row read again under it: a write that landed in between is not undone. */
  private recheck(read: () => { events: StoredEvent[]; traces: StoredTrace[] }, repair: boolean): KeptColumnRepair[] {
    if (this.statements.made.get() !== this.signature) return []
    const found = this.db
      .transaction(() => {
        const { events, traces } = read()
        return [...events.flatMap((row) => this.eventDiffers(row)), ...traces.flatMap((row) => this.traceDiffers(row))]
      })
      .deferred()
    if (found.length === 0 || !repair) return found
    const eventNos = (table: string) => new Set(found.filter(({ column }) => column.startsWith(table)).map(({ event_no }) => event_no))
    return this.db
      .transaction(() => {
        const repaired: KeptColumnRepair[] = []
        for (const eventNo of eventNos('events.')) {
          const row = this.statements.event.get(eventNo)
          const differs = row === undefined ? [] : this.eventDiffers(row)
          if (row === undefined || differs.length === 0) continue
          const made = this.expectedEvent(row)!
          this.statements.setEvent.run({
            event_no: eventNo,
            output: row.output === null ? null : made.output,
            callback_head: row.callback_head === null ? null : made.callback_head,
            baseband_requested: made.baseband_requested
          })
          repaired.push(...differs)
        }
        for (const eventNo of eventNos('traces.')) {
          const row = this.statements.trace.get(eventNo)
          const differs = row === undefined ? [] : this.traceDiffers(row)
          if (row === undefined || differs.length === 0) continue
          this.statements.setTrace.run(this.expectedTrace(row), eventNo)
          repaired.push(...differs)
        }
        return repaired
      })
      .immediate()
  }

  private eventDiffers(row: StoredEvent): KeptColumnRepair[] {
    const made = this.expectedEvent(row)
    if (made === null) return []
    const columns: KeptColumn[] = []
    if (row.output !== null && row.output !== made.output) columns.push('events.output')
    if (row.callback_head !== null && row.callback_head !== made.callback_head) columns.push('events.callback_head')
    if (row.baseband_requested !== made.baseband_requested) columns.push('events.baseband_requested')
    return columns.map((column) => ({ event_no: row.event_no, column }))
  }

  private traceDiffers(row: StoredTrace): KeptColumnRepair[] {
    if (row.output === null) return []
    const made = this.expectedTrace(row)
    return made === null || made === row.output ? [] : [{ event_no: row.event_no, column: 'traces.output' }]
  }

  /** Null where the record cannot be read: the audit's check reports it. */
  private expectedEvent(row: StoredEvent) {
    return readable(() => keptColumnsOf(toEvent(row), this.sites))
  }

  private expectedTrace(row: StoredTrace): string | null {
    return readable(() => traceJson(row.event_no, JSON.parse(row.doc) as TraceRecord, this.sites))
  }
}
