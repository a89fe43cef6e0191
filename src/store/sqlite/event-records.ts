import type Database from 'better-sqlite3'
import type { EventRecords } from '../../domain/audit/kept-facts.js'
import type { EventRecord, TraceRecord } from '../../domain/records.js'
import { EVENT_COLUMNS, toEvent, type EventRow } from './events.js'

/** A list of event numbers as one parameter: `IN (SELECT value FROM json_each(?))`. */
const IN_LIST = 'IN (SELECT value FROM json_each(?))'

const LISTED = 'SELECT event_no FROM events WHERE baseband_requested = 1 AND event_no > @after'
const KEPT = 'SELECT event_no FROM audits WHERE event_no > @after'

/**
 * Every record of several events at once, in a few indexed scans: what the kept audit is made
 * from when it is built or checked (never on the path of an ordinary write).
 */
export class EventRecordsReader {
  private readonly statements

  constructor(db: Database.Database) {
    const numbers = (select: string) => db.prepare<{ after: number; limit: number }, number>(`SELECT event_no FROM (${select}) ORDER BY event_no LIMIT @limit`).pluck()
    this.statements = {
      listed: numbers(LISTED),
      kept: numbers(KEPT),
      listedOrKept: numbers(`${LISTED} UNION ${KEPT}`),
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

  /** The next `limit` numbers after `after` of events in the audit (asking for baseband data). */
  listedAfter(after: number, limit: number): number[] {
    return this.statements.listed.all({ after, limit })
  }

  /** The same, of events with a kept audit. */
  keptAfter(after: number, limit: number): number[] {
    return this.statements.kept.all({ after, limit })
  }

  /** The same, of events in the audit or with a kept audit (the ones verification holds against each other). */
  listedOrKeptAfter(after: number, limit: number): number[] {
    return this.statements.listedOrKept.all({ after, limit })
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
