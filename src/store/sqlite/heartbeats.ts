import type Database from 'better-sqlite3'
import type { HeartbeatInput } from '../../../schemas/heartbeats.js'
import type { HeartbeatRecord } from '../../domain/records.js'
import type { Adapter } from '../guarded-store.js'
import type { HeartbeatCollection, HeartbeatPage } from '../port.js'
import { applyHeartbeat } from '../../domain/audit/kept-facts.js'
import type { RecordWrites } from './record-writes.js'
import type { Sites } from '../../vocabulary.js'

/** Heartbeats, one row per heartbeat_id, the record as JSON. */
export class SqliteHeartbeats implements Adapter<HeartbeatCollection> {
  private readonly statements
  readonly add: (heartbeats: readonly HeartbeatInput[], now: number) => number

  constructor(
    private readonly db: Database.Database,
    sites: Sites,
    records: RecordWrites
  ) {
    this.add = records.transaction((heartbeats: readonly HeartbeatInput[], now: number) => {
      let added = 0
      for (const heartbeat of heartbeats) added += this.statements.add([heartbeat.heartbeat_id, heartbeat.event_no, JSON.stringify(heartbeat), now], heartbeat).changes
      return added
    })
    this.statements = {
      // A heartbeat_id stored already is left as it is, so only the new ones reach the audit.
      add: records.statement<[number, number, string, number], HeartbeatInput>(
        `INSERT INTO heartbeats (heartbeat_id, event_no, doc, update_timestamp) VALUES (?, ?, ?, ?)
         ON CONFLICT (heartbeat_id) DO NOTHING`,
        (_row, { changes }, heartbeat) => (changes === 1 ? [heartbeat.event_no, (facts) => applyHeartbeat(facts, heartbeat, sites)] : null)
      ),
      page: db.prepare<[number, number, number], { doc: string; update_timestamp: number }>(
        'SELECT doc, update_timestamp FROM heartbeats WHERE event_no = ? AND heartbeat_id > ? ORDER BY heartbeat_id LIMIT ?'
      ),
      // Kept by triggers (migrations.ts), so that no read counts the rows.
      count: db.prepare<[number], number>('SELECT heartbeat_count FROM record_counts WHERE event_no = ?').pluck(),
      // The last entry of the event's range of heartbeats_by_event_update: one seek.
      latestUpdate: db.prepare<[number], number>('SELECT update_timestamp FROM heartbeats WHERE event_no = ? ORDER BY update_timestamp DESC LIMIT 1').pluck()
    }
  }

  /** One snapshot: the part, the count and the latest time agree even while heartbeats arrive. */
  page(eventNo: number, afterId: number | null, limit: number): HeartbeatPage {
    return this.db.transaction(() => this.readPage(eventNo, afterId, limit))()
  }

  /** `page` without a transaction of its own, for the views, which call it inside theirs. */
  readPage(eventNo: number, afterId: number | null, limit: number): HeartbeatPage {
    // heartbeat_id is at least 0, so -1 is before every one.
    const rows = this.statements.page.all(eventNo, afterId ?? -1, limit)
    return {
      heartbeats: rows.map((row): HeartbeatRecord => ({ heartbeat: JSON.parse(row.doc) as HeartbeatInput, update_timestamp: row.update_timestamp })),
      total: this.statements.count.get(eventNo) ?? 0,
      latestUpdate: this.statements.latestUpdate.get(eventNo) ?? 0
    }
  }
}
