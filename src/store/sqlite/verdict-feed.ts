import type Database from 'better-sqlite3'
import type { VerdictChange } from '../../../schemas/audit.js'
import type { Adapter } from '../guarded-store.js'
import type { VerdictFeed } from '../port.js'

/** The verdict changes every process records, read by their seq, as SqliteTransitions reads transitions. */
export class SqliteVerdictFeed implements Adapter<VerdictFeed> {
  private readonly statements

  constructor(db: Database.Database) {
    this.statements = {
      position: db.prepare<[], number>('SELECT coalesce(max(seq), 0) FROM audit_changes').pluck(),
      since: db.prepare<[number, number], { seq: number; event_no: number; message: string }>(
        'SELECT seq, event_no, message FROM audit_changes WHERE seq > ? ORDER BY seq LIMIT ?'
      )
    }
  }

  position(): number {
    return this.statements.position.get() ?? 0
  }

  since(position: number, limit: number): { items: VerdictChange[]; position: number } {
    const rows = this.statements.since.all(position, limit)
    return {
      items: rows.map((row) => changeOf(row)),
      position: rows.length === 0 ? position : rows[rows.length - 1]!.seq
    }
  }
}

/**
 * A row's change. A message that is not JSON (a hand edit) becomes a bare `{event_no}`, which the
 * live streams skip and count as a change they cannot write: a throw here would stop the feed at
 * that row for good, and every stream with it.
 */
function changeOf(row: { event_no: number; message: string }): VerdictChange {
  try {
    return JSON.parse(row.message) as VerdictChange
  } catch {
    return { event_no: row.event_no } as VerdictChange
  }
}
