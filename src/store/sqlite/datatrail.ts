import type Database from 'better-sqlite3'
import type { DatatrailRecord } from '../../domain/records.js'
import type { Adapter } from '../guarded-store.js'
import type { DatatrailCollection } from '../port.js'
import { applyMember } from '../../domain/audit/kept-facts.js'
import type { Sites } from '../../vocabulary.js'
import type { SqliteAudits } from './audits.js'

interface DatatrailRow {
  event_no: number
  member: string
  doc: string
  update_timestamp: number
}

/** Datatrail members, one row per (event, member), the member's fields as JSON. */
export class SqliteDatatrail implements Adapter<DatatrailCollection> {
  private readonly statements

  constructor(
    private readonly db: Database.Database,
    private readonly sites: Sites,
    private readonly audits: SqliteAudits
  ) {
    this.statements = {
      put: db.prepare<DatatrailRow>(
        `INSERT INTO datatrail (event_no, member, doc, update_timestamp) VALUES (@event_no, @member, @doc, @update_timestamp)
         ON CONFLICT (event_no, member) DO UPDATE SET doc = excluded.doc, update_timestamp = excluded.update_timestamp`
      ),
      of: db.prepare<[number], DatatrailRow>('SELECT * FROM datatrail WHERE event_no = ? ORDER BY member')
    }
  }

  put(members: readonly DatatrailRecord[]): void {
    this.db.transaction(() => {
      for (const { event_no, member, value, update_timestamp } of members) {
        this.statements.put.run({ event_no, member, doc: JSON.stringify(value), update_timestamp })
      }
      this.audits.keep(members.map(({ event_no, member, value }) => [event_no, (facts) => applyMember(facts, member, value, this.sites)]))
    })()
  }

  /** The members of one event (for the views). */
  of(eventNo: number): DatatrailRecord[] {
    return this.statements.of
      .all(eventNo)
      .map((row) => ({ event_no: row.event_no, member: row.member, value: JSON.parse(row.doc) as DatatrailRecord['value'], update_timestamp: row.update_timestamp }))
  }
}
