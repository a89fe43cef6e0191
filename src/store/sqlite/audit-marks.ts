import type Database from 'better-sqlite3'

/**
 * Other programs' writes are marked: triggers on the record tables (migrations.ts) note each row's
 * event in `audit_marks` in the writer's transaction, and the keeper looks at those events again
 * (SqliteKeptRows.marked). This connection's own writes keep the audit in their transaction, so a
 * TEMP trigger, which belongs to this connection alone, drops their marks: RAISE(IGNORE) skips the
 * mark's insert, not the write. Made before anything else is written on the connection.
 */
export function dropOwnMarks(db: Database.Database): void {
  db.exec(`CREATE TEMP TRIGGER IF NOT EXISTS own_writes_unmarked BEFORE INSERT ON main.audit_marks BEGIN SELECT RAISE(IGNORE); END`)
}
