import type Database from 'better-sqlite3'
import type { AuditSettings } from '../../domain/audit/audit-event.js'
import { factsOf, type KeptFacts } from '../../domain/audit/kept-facts.js'
import { beforeOf, OUTSIDE, keptWriteOf, type Before } from '../../kept-audit/keeping.js'
import { isUnreadableContent } from '../../kept-audit/kept-check.js'
import type { KeeperConfig } from '../../kept-audit/keeper.js'
import type { LookedRow } from '../../kept-audit/storage.js'
import type { EventRecordsReader } from './event-records.js'
import { REBUILD_PLAN, type SqliteKeptRows } from './kept-rows.js'
import { readPlan } from '../../kept-audit/rebuild.js'

/** An event a write touched: its kept row, none, one that cannot be read, or one a rebuild of the facts has not reached. */
type Touched = (LookedRow & { before: Before }) | 'absent' | 'unreadable' | 'not-rebuilt'

/** What a write hands over: each event it touched, and what the write did to its facts. */
export type FactChanges = Iterable<readonly [eventNo: number, change: (facts: KeptFacts) => void]>

/**
 * The keeper's `keep`, optimised inside SQLite's write transactions: a write applies what it did to
 * the kept facts (kept-facts.ts, `apply…`), so an update-trace reads one row, not five tables.
 * `keptWriteOf` (keeping.ts) decides what is written.
 */
export class SqliteKeptInWrites {
  private readonly factsRebuiltUpTo: () => number | undefined
  private readonly listed

  constructor(
    db: Database.Database,
    private readonly rows: SqliteKeptRows,
    private readonly records: EventRecordsReader,
    private readonly config: KeeperConfig,
    /** Whether this process knows of a rebuild under way: only then do writes ask how far it went. */
    private readonly rebuilding: () => boolean
  ) {
    // Where an unfinished rebuild of the facts stands: an event past it has its facts made from its records.
    const plan = db.prepare<[string], string>('SELECT value FROM settings WHERE name = ?').pluck()
    this.factsRebuiltUpTo = () => {
      const underWay = readPlan(plan.get(REBUILD_PLAN))
      return underWay?.what === 'facts' ? underWay.after : undefined
    }
    this.listed = db.prepare<[number], number>('SELECT baseband_requested FROM events WHERE event_no = ?').pluck()
  }

  /** Inside the caller's transaction, after its writes: applies each change to its event's facts, then looks at each event once and writes it. */
  keep(changes: FactChanges): void {
    const touched = new Map<number, Touched>()
    const rebuiltUpTo = this.rebuilding() ? this.factsRebuiltUpTo() : undefined
    for (const [eventNo, change] of changes) {
      let kept = touched.get(eventNo)
      if (kept === undefined) {
        kept = rebuiltUpTo !== undefined && eventNo > rebuiltUpTo ? 'not-rebuilt' : this.keptForWrite(eventNo)
        touched.set(eventNo, kept)
      }
      if (typeof kept === 'string') continue
      try {
        change(kept.facts)
      } catch (error) {
        if (!isUnreadableContent(error)) throw error
        touched.set(eventNo, 'unreadable')
      }
    }
    const settings: AuditSettings = { sites: this.config.sites, deadlines: this.config.deadlines, now: this.config.clock() }
    const fromRecords: number[] = []
    const notRebuilt: number[] = []
    for (const [eventNo, kept] of touched) {
      if (kept === 'unreadable') fromRecords.push(eventNo)
      else if (kept === 'not-rebuilt') {
        if (this.listed.get(eventNo) === 1 || this.rows.row(eventNo) !== undefined) notRebuilt.push(eventNo)
      } else if (kept !== 'absent') this.rows.put(eventNo, keptWriteOf(kept.facts, kept.before, settings), settings.now)
      else if (this.listed.get(eventNo) === 1) fromRecords.push(eventNo)
    }
    // Read together: a bulk load that writes its events after their other records brings a batch in at once.
    for (const [eventNo, records] of this.records.of(fromRecords)) this.rows.put(eventNo, keptWriteOf(factsOf(eventNo, records, this.config.sites), OUTSIDE, settings), settings.now)
    // As the rebuild will make them: no verdict change against a row made under other settings.
    for (const [eventNo, records] of this.records.of(notRebuilt)) this.rows.put(eventNo, keptWriteOf(factsOf(eventNo, records, this.config.sites), null, settings), settings.now)
  }

  /** A row that cannot be read is made again from the records (which hold the write already), so that it fails no write. */
  private keptForWrite(eventNo: number): Touched {
    const row = this.rows.row(eventNo)
    if (row === undefined) return 'absent'
    if ('error' in row) return 'unreadable'
    return { ...row, before: beforeOf(row) }
  }
}
