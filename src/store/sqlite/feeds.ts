import type Database from 'better-sqlite3'
import type { VerdictChange } from '../../../schemas/audit.js'
import type { FeedTransition } from '../../domain/records.js'
import type { Adapter } from '../guarded-store.js'
import type { TransitionFeed, VerdictFeed } from '../port.js'
import { TRANSITION_COLUMNS } from './traces.js'

/**
 * Rows every process writes, read by seq from the last position seen: one indexed range scan.
 * Writers commit one at a time under SQLite's lock, so a seq never appears after a higher one has been read.
 */
function bySeq<Row>(db: Database.Database, table: string, columns: string) {
  const position = db.prepare<[], number>(`SELECT coalesce(max(seq), 0) FROM ${table}`).pluck()
  const since = db.prepare<[number, number], Row & { seq: number }>(`SELECT seq, ${columns} FROM ${table} WHERE seq > ? ORDER BY seq LIMIT ?`)
  return {
    position: () => position.get() ?? 0,
    since: (after: number, limit: number) => {
      const rows = since.all(after, limit)
      return { rows, position: rows.at(-1)?.seq ?? after }
    }
  }
}

export function sqliteTransitions(db: Database.Database): Adapter<TransitionFeed> {
  const feed = bySeq<FeedTransition>(db, 'transitions', `event_no, ${TRANSITION_COLUMNS}`)
  return {
    position: feed.position,
    since: (after, limit) => {
      const { rows, position } = feed.since(after, limit)
      return { transitions: rows.map(({ seq: _seq, ...transition }) => transition), position }
    }
  }
}

export function sqliteVerdictFeed(db: Database.Database): Adapter<VerdictFeed> {
  const feed = bySeq<{ event_no: number; message: string }>(db, 'audit_changes', 'event_no, message')
  return {
    position: feed.position,
    since: (after, limit) => {
      const { rows, position } = feed.since(after, limit)
      return { items: rows.map(changeOf), position }
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
