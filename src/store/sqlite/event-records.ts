import type Database from 'better-sqlite3'
import type { EventRecords } from '../../domain/audit/kept-facts.js'
import type { EventRecord, TraceRecord } from '../../domain/records.js'
import { EVENT_COLUMNS, toEvent, type EventRow } from './events.js'

/** A list of event numbers as one parameter: `IN (SELECT value FROM json_each(?))`. */
const IN_LIST = 'IN (SELECT value FROM json_each(?))'

/** The tables that hold a record of an event, and the kept audit itself. */
const EVENT_TABLES = ['events', 'traces', 'datatrail', 'heartbeats', 'audits']

/**
 * Every record of several events at once, in a few indexed scans: what the kept audit is made
 * from when it is built or checked (never on the path of an ordinary write).
 */
export class EventRecordsReader {
  private readonly statements

  constructor(db: Database.Database) {
    const union = EVENT_TABLES.map((table) => `SELECT event_no FROM ${table} WHERE event_no > @after`).join(' UNION ')
    this.statements = {
      after: db.prepare<{ after: number; limit: number }, number>(`SELECT event_no FROM (${union}) ORDER BY event_no LIMIT @limit`).pluck(),
      events: db.prepare<[string], EventRow>(`SELECT ${EVENT_COLUMNS} FROM events WHERE event_no ${IN_LIST}`),
      traces: db.prepare<[string], { event_no: number; doc: string }>(`SELECT event_no, doc FROM traces WHERE event_no ${IN_LIST}`),
      datatrail: db.prepare<[string], { event_no: number; member: string; doc: string }>(
        `SELECT event_no, member, doc FROM datatrail WHERE event_no ${IN_LIST} ORDER BY event_no, member`
      ),
      heartbeats: db.prepare<[string], { event_no: number; doc: string }>(
        `SELECT event_no, doc FROM heartbeats WHERE event_no ${IN_LIST} ORDER BY event_no, heartbeat_id`
      ),
      transitions: db.prepare<[string], { event_no: number; key: string; to: string; at: number }>(
        `SELECT event_no, key, "to", at FROM transitions WHERE event_no ${IN_LIST} ORDER BY event_no, at, seq`
      )
    }
  }

  /** The next `limit` event numbers after `after` that have a record or a kept audit. */
  eventNumbersAfter(after: number, limit: number): number[] {
    return this.statements.after.all({ after, limit })
  }

  /** The records of each event, in the order given; the caller's transaction makes them one snapshot. */
  of(eventNos: readonly number[]): Map<number, EventRecords> {
    const records = new Map<number, { event: EventRecord | null; trace: TraceRecord | null; datatrail: EventRecords['datatrail'][number][]; heartbeats: { heartbeat: Record<string, unknown> }[]; transitions: EventRecords['transitions'][number][] }>()
    for (const eventNo of eventNos) records.set(eventNo, { event: null, trace: null, datatrail: [], heartbeats: [], transitions: [] })
    if (eventNos.length === 0) return records
    const list = JSON.stringify(eventNos)
    for (const row of this.statements.events.all(list)) records.get(row.event_no)!.event = toEvent(row)
    for (const row of this.statements.traces.all(list)) records.get(row.event_no)!.trace = JSON.parse(row.doc) as TraceRecord
    for (const row of this.statements.datatrail.all(list)) {
      records.get(row.event_no)!.datatrail.push({ member: row.member, value: JSON.parse(row.doc) as Record<string, unknown> })
    }
    for (const row of this.statements.heartbeats.all(list)) records.get(row.event_no)!.heartbeats.push({ heartbeat: JSON.parse(row.doc) as Record<string, unknown> })
    for (const row of this.statements.transitions.all(list)) records.get(row.event_no)!.transitions.push({ key: row.key, to: row.to, at: row.at })
    return records
  }
}
