import type Database from 'better-sqlite3'
import type { FeedTransition } from '../../domain/records.js'
import type { Adapter } from '../guarded-store.js'
import type { FeedPage, TransitionFeed } from '../port.js'
import { TRANSITION_COLUMNS } from './traces.js'

/**
 * The transitions every process writes, read by their seq: one indexed range scan from the last
 * position seen. Writers commit one at a time under SQLite's lock, so a seq never appears after a
 * higher one has been read.
 */
export class SqliteTransitions implements Adapter<TransitionFeed> {
  private readonly statements

  constructor(db: Database.Database) {
    this.statements = {
      position: db.prepare<[], { seq: number }>('SELECT coalesce(max(seq), 0) AS seq FROM transitions'),
      since: db.prepare<[number, number], FeedTransition & { seq: number }>(
        `SELECT seq, event_no, ${TRANSITION_COLUMNS} FROM transitions WHERE seq > ? ORDER BY seq LIMIT ?`
      )
    }
  }

  position(): number {
    return this.statements.position.get()?.seq ?? 0
  }

  since(position: number, limit: number): FeedPage {
    const rows = this.statements.since.all(position, limit)
    return {
      transitions: rows.map(({ seq: _seq, ...transition }) => transition),
      position: rows.length === 0 ? position : rows[rows.length - 1]!.seq
    }
  }
}
