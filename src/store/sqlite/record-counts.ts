import type Database from 'better-sqlite3'

/**
 * The kept heartbeat counts held against the rows: a count drifts when another program's INSERT OR
 * REPLACE deletes a row without its trigger. A check reads at most RECOUNT_BOUND index entries of
 * an event; one with more is not checked.
 */
export const RECOUNT_BOUND = 1000

export class SqliteRecordCounts {
  private readonly statements

  constructor(db: Database.Database) {
    this.statements = {
      kept: db.prepare<[number], number>('SELECT heartbeat_count FROM record_counts WHERE event_no = ?').pluck(),
      // The next event with heartbeats: one seek of heartbeats_by_event, however many each has.
      nextEvent: db.prepare<[number, number], number>('SELECT event_no FROM heartbeats WHERE event_no > ? AND event_no <= ? ORDER BY event_no LIMIT 1').pluck(),
      nextCounted: db.prepare<[number, number], number>('SELECT event_no FROM record_counts WHERE event_no > ? AND event_no <= ? AND heartbeat_count <> 0 ORDER BY event_no LIMIT 1').pluck(),
      // The rows themselves, at most the limit: a count(*) would read every one of the event's.
      upTo: db.prepare<[number, number], number>('SELECT 1 FROM heartbeats WHERE event_no = ? LIMIT ?').pluck(),
      set: db.prepare<[number, number]>(
        'INSERT INTO record_counts (event_no, heartbeat_count) VALUES (?, ?) ON CONFLICT (event_no) DO UPDATE SET heartbeat_count = excluded.heartbeat_count'
      )
    }
  }

  /** Checks the counts of the events after `after` up to `upTo` that have heartbeats or a count, and repairs those that differ: the events repaired. */
  recheck(after: number, upTo: number): number[] {
    const { kept, nextEvent, nextCounted, upTo: heartbeatsUpTo, set } = this.statements
    const repaired: number[] = []
    const next = (from: number) => {
      const withRows = nextEvent.get(from, upTo)
      const withCount = nextCounted.get(from, upTo)
      return withRows === undefined ? withCount : withCount === undefined ? withRows : Math.min(withRows, withCount)
    }
    for (let eventNo = next(after); eventNo !== undefined; eventNo = next(eventNo)) {
      const found = heartbeatsUpTo.all(eventNo, RECOUNT_BOUND + 1).length
      if (found > RECOUNT_BOUND || (kept.get(eventNo) ?? 0) === found) continue
      set.run(eventNo, found)
      repaired.push(eventNo)
    }
    return repaired
  }
}
