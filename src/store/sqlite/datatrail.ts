import type Database from 'better-sqlite3'
import type { DatatrailRecord } from '../../domain/records.js'
import type { Adapter } from '../guarded-store.js'
import type { DatatrailCollection } from '../port.js'
import { applyMember } from '../../domain/audit/kept-facts.js'
import type { Sites } from '../../vocabulary.js'
import type { RecordWrites } from './record-writes.js'

interface DatatrailRow {
  event_no: number
  member: string
  doc: string
  update_timestamp: number
}

/** Datatrail members, one row per (event, member), the member's fields as JSON. */
export class SqliteDatatrail implements Adapter<DatatrailCollection> {
  private readonly statements
  readonly put: (members: readonly DatatrailRecord[]) => void

  constructor(
    db: Database.Database,
    sites: Sites,
    records: RecordWrites
  ) {
    this.put = records.transaction((members: readonly DatatrailRecord[]) => {
      for (const { event_no, member, value, update_timestamp } of members) {
        this.statements.put({ event_no, member, doc: JSON.stringify(value), update_timestamp }, value)
      }
    })
    this.statements = {
      put: records.statement<DatatrailRow, DatatrailRecord['value']>(
        `INSERT INTO datatrail (event_no, member, doc, update_timestamp) VALUES (@event_no, @member, @doc, @update_timestamp)
         ON CONFLICT (event_no, member) DO UPDATE SET doc = excluded.doc, update_timestamp = excluded.update_timestamp`,
        ({ event_no, member }, _result, value) => [event_no, (facts) => applyMember(facts, member, value, sites)]
      ),
      of: db.prepare<[number], DatatrailRow>('SELECT * FROM datatrail WHERE event_no = ? ORDER BY member')
    }
  }

  /** The members of one event (for the views). */
  of(eventNo: number): DatatrailRecord[] {
    return this.statements.of
      .all(eventNo)
      .map((row) => ({ event_no: row.event_no, member: row.member, value: JSON.parse(row.doc) as DatatrailRecord['value'], update_timestamp: row.update_timestamp }))
  }
}
