import type Database from 'better-sqlite3'
import type { HeartbeatInput } from '../../../schemas/heartbeats.js'
import type { StoredDatatrail, StoredHeartbeat } from '../port.js'

/** Datatrail members and heartbeats: the parts of an event's status besides the event and trace. */
export class SqliteEventParts {
  private readonly statements

  constructor(private readonly db: Database.Database) {
    this.statements = {
      putDatatrail: db.prepare<{ event_no: number; member: string; doc: string; update_timestamp: number }>(
        `INSERT INTO datatrail (event_no, member, doc, update_timestamp) VALUES (@event_no, @member, @doc, @update_timestamp)
         ON CONFLICT (event_no, member) DO UPDATE SET doc = excluded.doc, update_timestamp = excluded.update_timestamp`
      ),
      datatrailOf: db.prepare<[number], { event_no: number; member: string; doc: string; update_timestamp: number }>(
        'SELECT * FROM datatrail WHERE event_no = ? ORDER BY member'
      ),
      addHeartbeat: db.prepare(
        `INSERT INTO heartbeats (heartbeat_id, event_no, doc, update_timestamp) VALUES (?, ?, ?, ?)
         ON CONFLICT (heartbeat_id) DO NOTHING`
      ),
      heartbeatsOf: db.prepare<[number], { doc: string; update_timestamp: number }>(
        'SELECT doc, update_timestamp FROM heartbeats WHERE event_no = ? ORDER BY heartbeat_id'
      )
    }
  }

  putDatatrail(items: StoredDatatrail[]): void {
    this.db.transaction(() => {
      for (const { event_no, member, value, update_timestamp } of items) {
        this.statements.putDatatrail.run({ event_no, member, doc: JSON.stringify(value), update_timestamp })
      }
    })()
  }

  datatrailOf(eventNo: number): StoredDatatrail[] {
    return this.statements.datatrailOf
      .all(eventNo)
      .map((row) => ({ event_no: row.event_no, member: row.member, value: JSON.parse(row.doc), update_timestamp: row.update_timestamp }))
  }

  addHeartbeats(heartbeats: HeartbeatInput[], now: number): number {
    let added = 0
    this.db.transaction(() => {
      for (const heartbeat of heartbeats) {
        added += this.statements.addHeartbeat.run(heartbeat.heartbeat_id, heartbeat.event_no, JSON.stringify(heartbeat), now).changes
      }
    })()
    return added
  }

  heartbeatsOf(eventNo: number): StoredHeartbeat[] {
    return this.statements.heartbeatsOf
      .all(eventNo)
      .map((row) => ({ record: JSON.parse(row.doc), update_timestamp: row.update_timestamp }))
  }
}
