import type Database from 'better-sqlite3'
import type { VerdictChange } from '../../../schemas/audit.js'
import type { EventRecords, KeptFacts } from '../../domain/audit/kept-facts.js'
import type { KeptLook } from '../../domain/audit/kept-look.js'
import type { WindowEntry } from '../../domain/audit/kept-report.js'
import type { EventPosition } from '../../domain/records.js'
import type { TimeWindow } from '../../domain/time-window.js'
import type { KeptWrite } from '../../kept-audit/keeping.js'
import { atOnce } from '../../maybe.js'
import { isKeptReport, isUnreadableContent } from '../../kept-audit/kept-check.js'
import { readPlan, type Plan, type RebuildRecord, type RebuildStorage, type Signatures } from '../../kept-audit/rebuild.js'
import type { Held, KeptColumnRepair, KeptRead, Maybe, LookedRow, RowWrite, ServedRow, Unreadable, UnreadableRow, WindowRow } from '../../kept-audit/storage.js'
import type { EventRecordsReader } from './event-records.js'
import type { SqliteKeptTexts } from './kept-texts.js'

/** Verdict changes kept for the live streams, which read them within a second: the table stays a few tens of MB. */
export const KEPT_CHANGES = 100_000

/** The settings row of a rebuild under way (rebuild.ts, Plan), written in the transaction of each batch. */
export const REBUILD_PLAN = 'kept_audit_rebuild'

/** A row as stored: what a conditional write holds it to is these columns as read. */
interface StoredRow {
  event_no: number
  facts: string
  verdict: KeptLook['verdict']
  due_at: number | null
  stuck: string
  looked_at: number | null
}

interface StoredWindowRow {
  event_no: number
  event_time: number
  verdict: NonNullable<KeptLook['verdict']>
  report: string | null
  fixed: string | null
}

/**
 * The kept heartbeat counts held against the rows, which another program's INSERT OR REPLACE
 * deletes without their trigger. A check reads at most RECOUNT_BOUND entries of an event; one with
 * more is not checked.
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

/** Why a row's content cannot be read (isUnreadableContent); any other error is thrown on. */
function unreadable(error: unknown): Unreadable {
  if (!isUnreadableContent(error)) throw error
  return { error: error instanceof Error ? error.message : String(error) }
}

/** A row's entry: the fixed audit as the text a read sends, or the report; throws a TypeError where it is neither. */
function entryOf(row: StoredWindowRow): WindowEntry {
  if (row.fixed !== null) {
    // Sent as it is, unparsed: only its frame is checked here (the verifier checks the rest).
    if (!row.fixed.startsWith('{"event_no":') || !row.fixed.endsWith('}')) throw new TypeError(`the fixed audit of event ${row.event_no} is not a record`)
    return { event_no: row.event_no, timestamp: row.event_time, verdict: row.verdict, json: row.fixed }
  }
  const report: unknown = JSON.parse(row.report ?? 'null')
  if (!isKeptReport(report)) throw new TypeError(`the kept report of event ${row.event_no} is not a report`)
  return report
}

const heldOf = ({ facts, verdict, due_at, stuck, looked_at }: StoredRow): Held => ({ existed: true, rev: { facts, verdict, due_at, stuck, looked_at } })

const sameRow = (row: StoredRow | undefined, held: Held) => {
  if (row === undefined) return !held.existed
  const rev = held.rev as Omit<StoredRow, 'event_no'> | undefined
  return held.existed && rev?.facts === row.facts && rev.verdict === row.verdict && rev.due_at === row.due_at && rev.stuck === row.stuck && rev.looked_at === row.looked_at
}

function lookedOf(row: StoredRow): LookedRow | UnreadableRow {
  try {
    return {
      ...heldOf(row),
      facts: JSON.parse(row.facts) as KeptFacts,
      factsText: row.facts,
      look: { verdict: row.verdict, due_at: row.due_at, stuck: JSON.parse(row.stuck) as string[] },
      looked_at: row.looked_at
    }
  } catch (error) {
    return { ...heldOf(row), ...unreadable(error) }
  }
}

/**
 * The kept audit's rows, `audits` (one per event asking for baseband data), and verdict changes,
 * `audit_changes`. A conditional write is one IMMEDIATE transaction holding each row to what was
 * read.
 */
export class SqliteKeptRows implements RebuildStorage {
  readonly keepsEveryEvent = false
  private readonly statements

  constructor(
    private readonly db: Database.Database,
    private readonly reader: EventRecordsReader,
    private readonly counts: SqliteRecordCounts,
    private readonly texts: SqliteKeptTexts
  ) {
    this.statements = {
      stored: db.prepare<[number], StoredRow>('SELECT event_no, facts, verdict, due_at, stuck, looked_at FROM audits WHERE event_no = ?'),
      served: db.prepare<[number], StoredRow & StoredWindowRow>('SELECT event_no, facts, verdict, due_at, stuck, looked_at, event_time, report, fixed FROM audits WHERE event_no = ?'),
      put: db.prepare<{ event_no: number; facts: string; report: string | null; fixed: string | null; event_time: number; verdict: string | null; due_at: number | null; stuck: string; looked_at: number }>(
        `INSERT INTO audits (event_no, facts, report, fixed, event_time, verdict, due_at, stuck, looked_at)
         VALUES (@event_no, @facts, @report, @fixed, @event_time, @verdict, @due_at, @stuck, @looked_at)
         ON CONFLICT (event_no) DO UPDATE SET facts = excluded.facts, report = excluded.report, fixed = excluded.fixed, event_time = excluded.event_time,
           verdict = excluded.verdict, due_at = excluded.due_at, stuck = excluded.stuck, looked_at = excluded.looked_at`
      ),
      remove: db.prepare<[number]>('DELETE FROM audits WHERE event_no = ?'),
      setLook: db.prepare<{ event_no: number; verdict: string | null; due_at: number | null; stuck: string; looked_at: number }>(
        'UPDATE audits SET verdict = @verdict, due_at = @due_at, stuck = @stuck, looked_at = @looked_at WHERE event_no = @event_no'
      ),
      setAside: db.prepare<[number]>('UPDATE audits SET due_at = NULL WHERE event_no = ?'),
      change: db.prepare<[number, string]>('INSERT INTO audit_changes (event_no, message) VALUES (?, ?)'),
      forgetChanges: db.prepare<[number]>('DELETE FROM audit_changes WHERE seq <= (SELECT max(seq) FROM audit_changes) - ?'),
      window: db.prepare<{ afterTime: number; afterNo: number; end: number; limit: number }, StoredWindowRow>(
        `SELECT event_no, event_time, verdict, report, fixed FROM audits
         WHERE (event_time, event_no) > (@afterTime, @afterNo) AND event_time < @end
         ORDER BY event_time, event_no LIMIT @limit`
      ),
      due: db.prepare<[number, number], number>('SELECT event_no FROM audits WHERE due_at <= ? ORDER BY due_at LIMIT ?').pluck(),
      // A count of the small looked_at index (rows an older release kept have none): count(*) would read every report.
      size: db.prepare<[], number>('SELECT count(*) FROM audits WHERE looked_at IS NOT NULL').pluck(),
      ahead: db.prepare<[number, number], number>('SELECT event_no FROM audits WHERE looked_at > ? ORDER BY looked_at DESC LIMIT ?').pluck(),
      setting: db.prepare<[string], string>('SELECT value FROM settings WHERE name = ?').pluck(),
      setSetting: db.prepare<[string, string]>('INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value'),
      forgetSetting: db.prepare<[string]>('DELETE FROM settings WHERE name = ?'),
      // Partial indexes hold these rows, so neither count reads a report.
      listed: db.prepare<[], number>('SELECT count(*) FROM events WHERE baseband_requested = 1').pluck(),
      marked: db.prepare<[number], { seq: number; event_no: number }>('SELECT seq, event_no FROM audit_marks ORDER BY seq LIMIT ?'),
      unmark: db.prepare<[number]>('DELETE FROM audit_marks WHERE seq <= ?')
    }
  }

  rows(eventNos: readonly number[]): Map<number, LookedRow | UnreadableRow> {
    const rows = new Map<number, LookedRow | UnreadableRow>()
    for (const eventNo of eventNos) {
      const row = this.row(eventNo)
      if (row !== undefined) rows.set(eventNo, row)
    }
    return rows
  }

  /** One event's row: what a write of its records reads. */
  row(eventNo: number): LookedRow | UnreadableRow | undefined {
    const row = this.statements.stored.get(eventNo)
    return row === undefined ? undefined : lookedOf(row)
  }

  /** In one read transaction: a snapshot, with no write lock held. */
  read(eventNos: readonly number[]): KeptRead {
    return this.db
      .transaction((): KeptRead => {
        const rows = new Map<number, ServedRow | UnreadableRow>()
        for (const eventNo of eventNos) {
          const row = this.statements.served.get(eventNo)
          if (row === undefined) continue
          const looked = lookedOf(row)
          try {
            if ('error' in looked) throw new TypeError(looked.error)
            rows.set(eventNo, { ...looked, entry: row.verdict === null ? null : entryOf(row), event_time: row.event_time })
          } catch (error) {
            rows.set(eventNo, { ...heldOf(row), ...unreadable(error) })
          }
        }
        return { rows, records: this.records(eventNos) }
      })
      .deferred()
  }

  /** The records of each event; where one event's cannot be read, the others' are read still. */
  records(eventNos: readonly number[]): Map<number, EventRecords | Unreadable> {
    try {
      return this.reader.of(eventNos)
    } catch (error) {
      const why = unreadable(error)
      if (eventNos.length === 1) return new Map([[eventNos[0]!, why]])
      return new Map(eventNos.flatMap((eventNo) => [...this.records([eventNo])]))
    }
  }

  /** One IMMEDIATE transaction: each row held to the columns read, then written; old verdict changes forgotten. */
  write(writes: readonly RowWrite[], now: number): number[] {
    if (writes.length === 0) return (this.statements.forgetChanges.run(KEPT_CHANGES), [])
    return this.db
      .transaction(() => {
        const lost: number[] = []
        for (const write of writes) {
          if (!sameRow(this.statements.stored.get(write.event_no), write.held)) lost.push(write.event_no)
          else if ('made' in write) this.put(write.event_no, write.made, now)
          else this.putLook(write.event_no, write.look, write.change, now)
        }
        this.statements.forgetChanges.run(KEPT_CHANGES)
        return lost
      })
      .immediate()
  }

  /** Inside the caller's transaction: writes the facts and their look, or removes the row of an event outside the audit, with the verdict change. */
  put(eventNo: number, made: KeptWrite, now: number): void {
    if (made.report === null) {
      this.statements.remove.run(eventNo)
    } else {
      this.statements.put.run({
        event_no: eventNo,
        facts: JSON.stringify(made.facts),
        report: made.fixed !== null ? null : JSON.stringify(made.report),
        fixed: made.fixed?.json ?? null,
        event_time: made.report.event.timestamp,
        verdict: made.look.verdict,
        due_at: made.look.due_at,
        stuck: JSON.stringify(made.look.stuck),
        looked_at: now
      })
    }
    if (made.change !== null) this.statements.change.run(eventNo, JSON.stringify(made.change))
  }

  private putLook(eventNo: number, look: KeptLook, change: VerdictChange | null, now: number): void {
    this.statements.setLook.run({ event_no: eventNo, verdict: look.verdict, due_at: look.due_at, stuck: JSON.stringify(look.stuck), looked_at: now })
    if (change !== null) this.statements.change.run(eventNo, JSON.stringify(change))
  }

  setAside(eventNo: number): void {
    this.statements.setAside.run(eventNo)
  }

  windowRows(window: TimeWindow, after: EventPosition | undefined, limit: number): WindowRow[] {
    const { timestamp, event_no } = after ?? { timestamp: window.start, event_no: -1 }
    return this.statements.window.all({ afterTime: timestamp, afterNo: event_no, end: window.end, limit }).map((row) => {
      try {
        return entryOf(row)
      } catch (error) {
        return { event_no: row.event_no, event_time: row.event_time, ...unreadable(error) }
      }
    })
  }

  lookedAfter(at: number, limit: number): number[] {
    return this.statements.ahead.all(at, limit)
  }

  dueBy(now: number, limit: number): number[] {
    return this.statements.due.all(now, limit)
  }

  /** The events in the audit and the kept rows: a row of an event no longer in it differs too. */
  auditedAfter(after: number, limit: number): number[] {
    return this.reader.listedOrKeptAfter(after, limit)
  }

  size(): number {
    return this.statements.size.get()!
  }

  columnsOf(eventNos: readonly number[], repair: boolean): KeptColumnRepair[] {
    return this.texts.recheckEvents(eventNos, repair)
  }

  columnsIn(after: number, upTo: number, withTexts: boolean): KeptColumnRepair[] {
    const texts = withTexts ? this.texts.recheckRange(after, upTo) : []
    return [...texts, ...this.counts.recheck(after, upTo).map((eventNo): KeptColumnRepair => ({ event_no: eventNo, column: 'record_counts.heartbeat_count' }))]
  }

  rebuildRecord(): RebuildRecord {
    const { setting } = this.statements
    return { facts: setting.get('kept_audit_facts'), looks: setting.get('kept_audit_looks'), plan: readPlan(setting.get(REBUILD_PLAN)) }
  }

  recordRebuild(plan: Plan | null, { facts, looks }: Signatures): void {
    const { setSetting, forgetSetting } = this.statements
    if (plan !== null) return void setSetting.run(REBUILD_PLAN, JSON.stringify(plan))
    setSetting.run('kept_audit_facts', facts)
    setSetting.run('kept_audit_looks', looks)
    forgetSetting.run(REBUILD_PLAN)
  }

  rebuildTotal(what: Plan['what']): number {
    return what === 'facts' ? this.statements.listed.get()! : this.size()
  }

  keptAfter(after: number, limit: number): number[] {
    return this.reader.keptAfter(after, limit)
  }

  /** One IMMEDIATE transaction: throws SQLITE_BUSY at once while another process holds the write lock. */
  batch<T>(work: () => Maybe<T>): T {
    return this.db.transaction(() => atOnce(work())).immediate()
  }

  /** Events other programs wrote (store.ts, dropOwnMarks), oldest mark first, and the highest seq read (0 when none). */
  marked(limit: number): { eventNos: number[]; upTo: number } {
    const rows = this.statements.marked.all(limit)
    return { eventNos: rows.map((row) => row.event_no), upTo: rows.at(-1)?.seq ?? 0 }
  }

  /** Removes the marks up to `upTo`: one made since the read that returned it stays. */
  unmark(upTo: number): void {
    this.statements.unmark.run(upTo)
  }
}
