import type Database from 'better-sqlite3'
import type { HeartbeatInput } from '../../../schemas/heartbeats.js'
import type { HeartbeatRecord } from '../../domain/records.js'
import type { Adapter } from '../guarded-store.js'
import type { HeartbeatCollection } from '../port.js'

/** Heartbeats, one row per heartbeat_id, the record as JSON. */
export class SqliteHeartbeats implements Adapter<HeartbeatCollection> {
  private readonly statements

  constructor(private readonly db: Database.Database) {
    this.statements = {
      add: db.prepare<[number, number, string, number]>(
        `INSERT INTO heartbeats (heartbeat_id, event_no, doc, update_timestamp) VALUES (?, ?, ?, ?)
         ON CONFLICT (heartbeat_id) DO NOTHING`
      ),
      of: db.prepare<[number], { doc: string; update_timestamp: number }>(
        'SELECT doc, update_timestamp FROM heartbeats WHERE event_no = ? ORDER BY heartbeat_id'
      )
    }
  }

  add(heartbeats: readonly HeartbeatInput[], now: number): number {
    let added = 0
    this.db.transaction(() => {
      for (const heartbeat of heartbeats) {
        added += this.statements.add.run(heartbeat.heartbeat_id, heartbeat.event_no, JSON.stringify(heartbeat), now).changes
      }
    })()
    return added
  }

  /** The heartbeats of one event by heartbeat_id (for the views). */
  of(eventNo: number): HeartbeatRecord[] {
    return this.statements.of.all(eventNo).map((row) => ({ heartbeat: JSON.parse(row.doc) as HeartbeatInput, update_timestamp: row.update_timestamp }))
  }
}
