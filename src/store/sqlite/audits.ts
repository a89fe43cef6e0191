import type Database from 'better-sqlite3'
import type { VerdictChange } from '../../../schemas/audit.js'
import type { AuditSettings } from '../../domain/audit/audit-event.js'
import { factsOf, type EventRecords, type KeptFacts } from '../../domain/audit/kept-facts.js'
import type { KeptLook } from '../../domain/audit/kept-look.js'
import { reportOf, type WindowEntry } from '../../domain/audit/kept-report.js'
import { beforeOf, OUTSIDE, relooked, remade, type Before } from '../../domain/audit/keeping.js'
import { isKeptReport, isUnreadableContent, keptDifferences, LOOK_CLOCK_TOLERANCE_MS, reportedParts, type KeptPart, type KeptRow } from '../../domain/audit/kept-check.js'
import type { EventPosition } from '../../domain/records.js'
import type { StageDeadlines } from '../../domain/stage-deadlines.js'
import type { TimeWindow } from '../../domain/time-window.js'
import type { Sites } from '../../vocabulary.js'
import type { Adapter } from '../guarded-store.js'
import type { AuditCheck, AuditCollection, AuditMarks, KeptAudit, KeptColumnRepair } from '../port.js'
import type { EventRecordsReader } from './event-records.js'
import type { SqliteAuditMarks } from './audit-marks.js'
import { factsRebuiltUpTo } from './rebuild-plan.js'
import type { SqliteRecordCounts } from './record-counts.js'
import type { SqliteKeptTexts } from './kept-texts.js'

interface AuditRow {
  event_no: number
  facts: string
  verdict: KeptLook['verdict']
  due_at: number | null
  stuck: string
}

/** A row with everything a read serves of it, as checked (kept-check.ts). */
interface ServedRow extends AuditRow, Pick<WindowRow, 'event_time' | 'report' | 'fixed'> {}

/**
 * Verdict changes kept for the live streams, which read them within a second of their writing:
 * older ones are forgotten by the deadline check, so the table stays a few tens of MB however long
 * the service runs (changes are messages, not history: the audit itself is the record).
 */
export const KEPT_CHANGES = 100_000

/** A row as the window reads it from the covering index: the report, or the fixed audit and its verdict. */
interface WindowRow {
  event_no: number
  event_time: number
  verdict: NonNullable<KeptLook['verdict']>
  report: string | null
  fixed: string | null
}

/** A row's entry; throws a TypeError where the report is not one (see isKeptReport). */
function toWindowEntry(row: WindowRow): WindowEntry {
  if (row.fixed !== null) {
    // Sent as it is, unparsed: only its frame is checked here (the verifier checks the rest).
    if (!row.fixed.startsWith('{"event_no":') || !row.fixed.endsWith('}')) throw new TypeError(`the fixed audit of event ${row.event_no} is not a record`)
    return { event_no: row.event_no, timestamp: row.event_time, verdict: row.verdict, json: row.fixed }
  }
  const report: unknown = JSON.parse(row.report ?? 'null')
  if (!isKeptReport(report)) throw new TypeError(`the kept report of event ${row.event_no} is not a report`)
  return report
}

/**
 * An event a write touched: its kept audit as found, none, one that could not be read, or one a
 * rebuild of the facts has not reached yet (its facts were made under other settings).
 */
type Touched = (KeptAudit & { before: Before }) | 'absent' | 'unreadable' | 'not-rebuilt'

/** What a write hands over: each event it touched, and what the write did to its facts. */
export type FactChanges = Iterable<readonly [eventNo: number, change: (facts: KeptFacts) => void]>

const toKept = (row: AuditRow): KeptAudit => ({
  facts: JSON.parse(row.facts) as KeptFacts,
  look: { verdict: row.verdict, due_at: row.due_at, stuck: JSON.parse(row.stuck) as string[] }
})

/** A row as checked; throws where a part cannot be read (that row differs as a whole). */
const toKeptRow = (row: ServedRow): KeptRow => ({
  ...toKept(row),
  entry: row.verdict === null ? null : toWindowEntry(row as WindowRow),
  event_time: row.event_time
})

/**
 * The kept audit on SQLite: one row per event in the audit, those whose actions ask for baseband
 * data (see migrations.ts). `keep` is called by every writer inside its own transaction, so a
 * record and its event's audit are committed together or not at all; reads are one row or one
 * index range. An event outside the audit has no row, and a write of it costs one lookup that
 * finds none: the pipeline writes traces and heartbeats of events it has not sent yet, and most
 * events never ask for baseband data. The write that brings an event into the audit makes its row
 * from all its records at once.
 */
export class SqliteAudits implements Adapter<AuditCollection> {
  private readonly factsRebuiltUpTo: () => number | undefined
  private readonly statements

  constructor(
    private readonly db: Database.Database,
    private readonly sites: Sites,
    private readonly deadlines: StageDeadlines,
    private readonly clock: () => number,
    private readonly records: EventRecordsReader,
    private readonly marks: SqliteAuditMarks,
    private readonly counts: SqliteRecordCounts,
    private readonly texts: SqliteKeptTexts,
    /** Whether this process knows of a rebuild under way: only then do writes ask how far it went. */
    private readonly rebuilding: () => boolean = () => false
  ) {
    this.factsRebuiltUpTo = factsRebuiltUpTo(db)
    this.statements = {
      get: db.prepare<[number], AuditRow>('SELECT event_no, facts, verdict, due_at, stuck FROM audits WHERE event_no = ?'),
      // The deadline check's read: the row and the clock its look was made at, in one statement.
      getLooked: db.prepare<[number], AuditRow & { looked_at: number | null }>('SELECT event_no, facts, verdict, due_at, stuck, looked_at FROM audits WHERE event_no = ?'),
      served: db.prepare<[number], ServedRow>('SELECT event_no, facts, verdict, due_at, stuck, event_time, report, fixed FROM audits WHERE event_no = ?'),
      put: db.prepare<{ event_no: number; facts: string; report: string | null; fixed: string | null; event_time: number; verdict: string | null; due_at: number | null; stuck: string; looked_at: number }>(
        `INSERT INTO audits (event_no, facts, report, fixed, event_time, verdict, due_at, stuck, looked_at)
         VALUES (@event_no, @facts, @report, @fixed, @event_time, @verdict, @due_at, @stuck, @looked_at)
         ON CONFLICT (event_no) DO UPDATE SET facts = excluded.facts, report = excluded.report, fixed = excluded.fixed, event_time = excluded.event_time,
           verdict = excluded.verdict, due_at = excluded.due_at, stuck = excluded.stuck, looked_at = excluded.looked_at`
      ),
      remove: db.prepare<[number]>('DELETE FROM audits WHERE event_no = ?'),
      listed: db.prepare<[number], number>('SELECT baseband_requested FROM events WHERE event_no = ?').pluck(),
      setLook: db.prepare<{ event_no: number; verdict: string | null; due_at: number | null; stuck: string; looked_at: number }>(
        'UPDATE audits SET verdict = @verdict, due_at = @due_at, stuck = @stuck, looked_at = @looked_at WHERE event_no = @event_no'
      ),
      // Out of the due index: a row whose records cannot be read would otherwise come first at every deadline check.
      setAside: db.prepare<[number]>('UPDATE audits SET due_at = NULL WHERE event_no = ?'),
      change: db.prepare<[number, string]>('INSERT INTO audit_changes (event_no, message) VALUES (?, ?)'),
      forgetChanges: db.prepare<[number]>('DELETE FROM audit_changes WHERE seq <= (SELECT max(seq) FROM audit_changes) - ?'),
      window: db.prepare<{ afterTime: number; afterNo: number; end: number; limit: number }, WindowRow>(
        `SELECT event_no, event_time, verdict, report, fixed FROM audits
         WHERE (event_time, event_no) > (@afterTime, @afterNo) AND event_time < @end
         ORDER BY event_time, event_no LIMIT @limit`
      ),
      due: db.prepare<[number, number], number>('SELECT event_no FROM audits WHERE due_at <= ? ORDER BY due_at LIMIT ?').pluck(),
      // Rows kept since looks carry their clock (all but those of an older release): a count of the
      // small looked_at index, where count(*) reads every report and fixed audit, freezing the event loop on a large store.
      size: db.prepare<[], number>('SELECT count(*) FROM audits WHERE looked_at IS NOT NULL').pluck(),
      ahead: db.prepare<[number, number], number>('SELECT event_no FROM audits WHERE looked_at > ? ORDER BY looked_at DESC LIMIT ?').pluck()
    }
  }

  /** Events other programs wrote (audit-marks.ts); the service's own writes keep the audit in their transaction and leave none. */
  marked(limit: number): AuditMarks {
    return this.marks.marked(limit)
  }

  unmark(upTo: number): void {
    this.marks.unmark(upTo)
  }

  settings(now = this.clock()): AuditSettings {
    return { sites: this.sites, deadlines: this.deadlines, now }
  }

  /**
   * Inside the caller's transaction, after its writes: applies each change to its event's facts
   * (an event met twice is read once), then looks at each event once and writes it, with its
   * verdict change. An event without a row is in the audit only if the write brought it in: then
   * its facts are made from its records, which hold the write already.
   */
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
    const settings = this.settings()
    const fromRecords: number[] = []
    const notRebuilt: number[] = []
    for (const [eventNo, kept] of touched) {
      if (kept === 'unreadable') fromRecords.push(eventNo)
      else if (kept === 'not-rebuilt') {
        if (this.statements.listed.get(eventNo) === 1 || this.statements.get.get(eventNo) !== undefined) notRebuilt.push(eventNo)
      } else if (kept !== 'absent') this.write(kept.facts, kept.before, settings)
      else if (this.statements.listed.get(eventNo) === 1) fromRecords.push(eventNo)
    }
    // Read together: a bulk load that writes its events after their other records brings a batch in at once.
    for (const [eventNo, records] of this.records.of(fromRecords)) this.write(factsOf(eventNo, records, this.sites), OUTSIDE, settings)
    // As the rebuild will make them: no verdict change against a row made under other settings.
    for (const [eventNo, records] of this.records.of(notRebuilt)) this.write(factsOf(eventNo, records, this.sites), null, settings)
  }

  /**
   * An event's kept audit as a write finds it, with what it was before the write; a row that
   * cannot be read is made again from the records (which hold the write already), so that it
   * fails no write.
   */
  private keptForWrite(eventNo: number): Touched {
    try {
      const found = this.find(eventNo)
      return found === null ? 'absent' : { ...found, before: beforeOf(found) }
    } catch (error) {
      if (!isUnreadableContent(error)) throw error
      return 'unreadable'
    }
  }

  /** Writes the facts and their look, or removes the row of an event that left the audit, with the verdict change against `before` (none when null). */
  private write(facts: KeptFacts, before: Before | null, settings: AuditSettings): VerdictChange | null {
    const made = remade(facts, before, settings)
    if (made.report === null) {
      this.statements.remove.run(facts.event_no)
    } else {
      this.statements.put.run({
        event_no: facts.event_no,
        facts: JSON.stringify(made.facts),
        report: made.fixed !== null ? null : JSON.stringify(made.report),
        fixed: made.fixed?.json ?? null,
        event_time: made.report.event.timestamp,
        verdict: made.look.verdict,
        due_at: made.look.due_at,
        stuck: JSON.stringify(made.look.stuck),
        looked_at: settings.now
      })
    }
    if (made.change !== null) this.statements.change.run(facts.event_no, JSON.stringify(made.change))
    return made.change
  }

  /**
   * One batch of a rebuild (kept-audits-refresh.ts), inside the caller's transaction: the next
   * `limit` events after `after`, in order of event number, made again from their records
   * (`facts`: every event in the audit or with a kept row, so the row of an event no longer in it
   * goes) or looked at again with the configured deadlines (`looks`: every kept row). Resolves to
   * the events done. No verdict change is recorded: nothing streams them while the audit is made
   * again, and a store's first build would record one per event. An event whose records cannot be
   * read is left as it is, for the verifier to report.
   */
  rebuildAfter(what: 'facts' | 'looks', after: number, limit: number): number[] {
    const settings = this.settings()
    if (what === 'looks') {
      const eventNos = this.records.keptAfter(after, limit)
      for (const eventNo of eventNos) {
        try {
          this.write(this.find(eventNo)!.facts, null, settings)
        } catch (error) {
          if (!isUnreadableContent(error)) throw error
        }
      }
      return eventNos
    }
    const eventNos = this.records.listedOrKeptAfter(after, limit)
    for (const [eventNo, records] of this.readRecords(eventNos)) {
      try {
        if ('error' in records) continue
        this.write(factsOf(eventNo, records, this.sites), null, settings)
      } catch (error) {
        if (!isUnreadableContent(error)) throw error
      }
    }
    return eventNos
  }

  find(eventNo: number): KeptAudit | null {
    const row = this.statements.get.get(eventNo)
    return row === undefined ? null : toKept(row)
  }

  windowPage(window: TimeWindow, after: EventPosition | undefined, limit: number): WindowEntry[] {
    const entries: WindowEntry[] = []
    let position = after ?? { timestamp: window.start, event_no: -1 }
    // A row left out (see entryOf) is made up for by the next: a short page would end the window's read.
    for (;;) {
      const rows = this.statements.window.all({ afterTime: position.timestamp, afterNo: position.event_no, end: window.end, limit: limit - entries.length })
      for (const row of rows) {
        const entry = this.entryOf(row)
        if (entry !== null) entries.push(entry)
      }
      if (entries.length === limit || rows.length < limit - entries.length || rows.length === 0) return entries
      position = { timestamp: rows.at(-1)!.event_time, event_no: rows.at(-1)!.event_no }
    }
  }

  /**
   * A row's entry; one whose report cannot be read is made from the event's records instead (its
   * place in the window is the row's), so that one bad row costs the window nothing: the verifier
   * repairs the row itself.
   */
  private entryOf(row: WindowRow): WindowEntry | null {
    try {
      return toWindowEntry(row)
    } catch (error) {
      if (!isUnreadableContent(error)) throw error
      const records = this.records.of([row.event_no]).get(row.event_no)!
      // Null where the records say the event is no longer in the audit: the row should not be there.
      return reportOf(factsOf(row.event_no, records, this.sites), this.sites)
    }
  }

  due(now: number, limit: number): number[] {
    const ahead = this.statements.ahead.all(now + LOOK_CLOCK_TOLERANCE_MS, limit)
    if (ahead.length === limit) return ahead
    const due = this.statements.due.all(now, limit).filter((eventNo) => !ahead.includes(eventNo))
    return [...ahead, ...due].slice(0, limit)
  }

  settle(eventNos: readonly number[], now: number, unreadable?: (eventNo: number) => void): VerdictChange[] {
    const settings = this.settings(now)
    const changes: VerdictChange[] = []
    this.db.transaction(() => {
      for (const eventNo of eventNos) {
        let looked: { kept: KeptAudit; relook: ReturnType<typeof relooked> } | undefined
        try {
          const row = this.statements.getLooked.get(eventNo)
          if (row === undefined) continue
          const kept = toKept(row)
          looked = { kept, relook: relooked(kept, row.looked_at, settings) }
        } catch (error) {
          if (!isUnreadableContent(error)) throw error
          unreadable?.(eventNo)
          continue
        }
        const { relook } = looked
        if (relook === null) continue
        const { look, change } = relook
        this.statements.setLook.run({ event_no: eventNo, verdict: look.verdict, due_at: look.due_at, stuck: JSON.stringify(look.stuck), looked_at: now })
        if (change === null) continue
        this.statements.change.run(eventNo, JSON.stringify(change))
        changes.push(change)
      }
      this.statements.forgetChanges.run(KEPT_CHANGES)
    }).immediate()
    return changes
  }

  /** The kept audits of the events, and the kept columns of their records (kept-texts.ts). */
  check(eventNos: readonly number[], now: number, { repair = true }: { repair?: boolean } = {}): AuditCheck {
    const columns = this.texts.recheckEvents(eventNos, repair)
    return { ...this.checkAudits(eventNos, now, repair), columns }
  }

  /**
   * Finds the rows that differ in one read transaction (a snapshot, with no write lock held), then
   * repairs them under the write lock, each held against its records again: a write that landed
   * between the two is in the records read then, so it is neither undone nor counted. Without
   * `repair`, what the snapshot found is the answer (see reported) and nothing is written.
   */
  private checkAudits(eventNos: readonly number[], now: number, repair: boolean): Omit<AuditCheck, 'columns'> {
    const settings = this.settings(now)
    const found = this.db.transaction(() => this.compare(eventNos, settings)).deferred()
    if (!repair) return reported(found)
    const differing = found.filter((compared) => 'parts' in compared && compared.parts.length > 0)
    if (differing.length === 0) return { mismatches: [], unreadable: [] }
    return this.db
      .transaction(() => {
        const result: Omit<AuditCheck, 'columns'> = { mismatches: [], unreadable: [] }
        for (const found of this.compare(differing.map((found) => found.event_no), settings)) {
          if (!('parts' in found)) {
            this.statements.setAside.run(found.event_no)
            result.unreadable.push(found)
          } else if (found.parts.length > 0) {
            this.write(found.recomputed, found.kept === null ? OUTSIDE : beforeOf(found.kept), settings)
            result.mismatches.push({ event_no: found.event_no, parts: found.parts, kept: found.kept?.facts ?? null, recomputed: found.recomputed })
          }
        }
        return result
      })
      .immediate()
  }

  size(): number {
    return this.statements.size.get()!
  }

  verify(after: number, limit: number, now: number): AuditCheck & { checked: number; last: number | null } {
    // The events in the audit and the kept rows: a row of an event no longer in it differs too.
    const listed = this.records.listedOrKeptAfter(after, limit)
    const last = listed.length < limit ? null : listed.at(-1)!
    const upTo = last ?? Number.MAX_SAFE_INTEGER
    // The kept columns of the same stretch of event numbers, whatever is audited there, first: an
    // event whose flag said it asked for no baseband data, wrongly, is then checked with the others.
    const columns = [
      ...this.texts.recheckRange(after, upTo),
      ...this.counts.recheck(after, upTo).map((eventNo): KeptColumnRepair => ({ event_no: eventNo, column: 'record_counts.heartbeat_count' }))
    ]
    const flagged = columns.filter(({ column }) => column === 'events.baseband_requested').map(({ event_no }) => event_no)
    const eventNos = [...new Set([...listed, ...flagged])].sort((a, b) => a - b)
    return { ...this.checkAudits(eventNos, now, true), columns, checked: eventNos.length, last }
  }

  /**
   * Each event's kept row against the audit its records make, inside the caller's transaction: the
   * parts that differ (none when it agrees), or why its records could not be read.
   */
  private compare(eventNos: readonly number[], settings: AuditSettings): Compared[] {
    const compared: Compared[] = []
    for (const [eventNo, records] of this.readRecords(eventNos)) {
      let recomputed: KeptFacts
      try {
        if ('error' in records) throw new TypeError(records.error)
        recomputed = factsOf(eventNo, records, this.sites)
      } catch (error) {
        if (!isUnreadableContent(error)) throw error
        compared.push({ event_no: eventNo, error: error instanceof Error ? error.message : String(error) })
        continue
      }
      let kept: KeptRow | null = null
      let parts: KeptPart[]
      try {
        const row = this.statements.served.get(eventNo)
        kept = row === undefined ? null : toKeptRow(row)
        parts = keptDifferences(kept, recomputed, settings)
      } catch (error) {
        if (!isUnreadableContent(error)) throw error
        kept = null
        parts = ['row']
      }
      compared.push({ event_no: eventNo, parts, kept, recomputed })
    }
    return compared
  }

  /** The records of each event; where one event's cannot be read, the others' are read still. */
  private readRecords(eventNos: readonly number[]): Map<number, EventRecords | { error: string }> {
    try {
      return this.records.of(eventNos)
    } catch (error) {
      if (!isUnreadableContent(error)) throw error
      if (eventNos.length === 1) return new Map([[eventNos[0]!, { error: error instanceof Error ? error.message : String(error) }]])
      const records = new Map<number, EventRecords | { error: string }>()
      for (const eventNo of eventNos) for (const [number, read] of this.readRecords([eventNo])) records.set(number, read)
      return records
    }
  }
}

/** One event compared: the parts of its row that differ, or why its records could not be read. */
type Compared = { event_no: number; parts: KeptPart[]; kept: KeptRow | null; recomputed: KeptFacts } | { event_no: number; error: string }

/** What a comparison found, as a check reports it without repairing (the look left out: see LOOK_PARTS). */
function reported(found: readonly Compared[]): Omit<AuditCheck, 'columns'> {
  const result: Omit<AuditCheck, 'columns'> = { mismatches: [], unreadable: [] }
  for (const compared of found) {
    if (!('parts' in compared)) {
      result.unreadable.push(compared)
      continue
    }
    const parts = reportedParts(compared.parts)
    if (parts.length > 0) result.mismatches.push({ event_no: compared.event_no, parts, kept: compared.kept?.facts ?? null, recomputed: compared.recomputed })
  }
  return result
}
