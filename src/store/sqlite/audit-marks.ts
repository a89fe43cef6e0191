import type Database from 'better-sqlite3'

/**
 * Makes the marks of this connection's own writes vanish (see SqliteAuditMarks): a TEMP trigger
 * belongs to the connection that made it, so other programs' writes, and an older version's, are
 * still marked. RAISE(IGNORE) skips the mark's insert alone; the write that made it goes on. Made
 * before anything else is written on a connection (the start's refresh of stored texts included).
 */
export function dropOwnMarks(db: Database.Database): void {
  db.exec(`CREATE TEMP TRIGGER IF NOT EXISTS own_writes_unmarked BEFORE INSERT ON main.audit_marks BEGIN SELECT RAISE(IGNORE); END`)
}

/**
 * The events another program wrote. Triggers on the record tables (migrations.ts) note the event
 * of each row written in `audit_marks`, in the writer's own transaction, so no write escapes: the
 * service reads the marks, looks at those events again and removes the marks it read. The
 * service's own writes leave none (dropOwnMarks), as they keep the audit in their own transaction.
 * An event has at most one mark, its newest: a mark made after a read has a seq beyond the read's.
 */
export class SqliteAuditMarks {
  private readonly statements

  constructor(db: Database.Database) {
    this.statements = {
      marked: db.prepare<[number], { seq: number; event_no: number }>('SELECT seq, event_no FROM audit_marks ORDER BY seq LIMIT ?'),
      unmark: db.prepare<[number]>('DELETE FROM audit_marks WHERE seq <= ?')
    }
  }

  /** The events marked, oldest mark first, at most `limit`, and the highest seq read (0 when none). */
  marked(limit: number): { eventNos: number[]; upTo: number } {
    const rows = this.statements.marked.all(limit)
    return { eventNos: rows.map((row) => row.event_no), upTo: rows.at(-1)?.seq ?? 0 }
  }

  /** Removes the marks up to `upTo`: one made since the read that returned it stays. */
  unmark(upTo: number): void {
    this.statements.unmark.run(upTo)
  }
}
