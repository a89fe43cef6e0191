import { isDeepStrictEqual } from 'node:util'
import type Database from 'better-sqlite3'
import type { VerdictChange } from '../../../schemas/audit.js'
import type { AuditSettings } from '../../domain/audit/audit-event.js'
import { compact, factsOf, type KeptFacts } from '../../domain/audit/kept-facts.js'
import { lookAt, NOT_AUDITED, sameLook, verdictChange, type KeptLook, type Look } from '../../domain/audit/kept-look.js'
import { fixedAuditOf, type KeptReport, type WindowEntry } from '../../domain/audit/kept-report.js'
import type { EventPosition } from '../../domain/records.js'
import type { StageDeadlines } from '../../domain/stage-deadlines.js'
import type { TimeWindow } from '../../domain/time-window.js'
import type { Sites } from '../../vocabulary.js'
import type { Adapter } from '../guarded-store.js'
import type { AuditCollection, AuditMarks, AuditMismatch, KeptAudit } from '../port.js'
import type { EventRecordsReader } from './event-records.js'
import type { SqliteAuditMarks } from './audit-marks.js'

interface AuditRow {
  event_no: number
  facts: string
  verdict: KeptLook['verdict']
  due_at: number | null
  stuck: string
}

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

const toWindowEntry = (row: WindowRow): WindowEntry =>
  row.fixed !== null ? { event_no: row.event_no, timestamp: row.event_time, verdict: row.verdict, json: row.fixed } : (JSON.parse(row.report!) as KeptReport)

/** What a write hands over: each event it touched, and what the write did to its facts. */
export type FactChanges = Iterable<readonly [eventNo: number, change: (facts: KeptFacts) => void]>

const toKept = (row: AuditRow): KeptAudit => ({
  facts: JSON.parse(row.facts) as KeptFacts,
  look: { verdict: row.verdict, due_at: row.due_at, stuck: JSON.parse(row.stuck) as string[] }
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
  private readonly statements

  constructor(
    private readonly db: Database.Database,
    private readonly sites: Sites,
    private readonly deadlines: StageDeadlines,
    private readonly clock: () => number,
    private readonly records: EventRecordsReader,
    private readonly marks: SqliteAuditMarks
  ) {
    this.statements = {
      get: db.prepare<[number], AuditRow>('SELECT event_no, facts, verdict, due_at, stuck FROM audits WHERE event_no = ?'),
      put: db.prepare<{ event_no: number; facts: string; report: string | null; fixed: string | null; event_time: number; verdict: string | null; due_at: number | null; stuck: string }>(
        `INSERT INTO audits (event_no, facts, report, fixed, event_time, verdict, due_at, stuck)
         VALUES (@event_no, @facts, @report, @fixed, @event_time, @verdict, @due_at, @stuck)
         ON CONFLICT (event_no) DO UPDATE SET facts = excluded.facts, report = excluded.report, fixed = excluded.fixed, event_time = excluded.event_time,
           verdict = excluded.verdict, due_at = excluded.due_at, stuck = excluded.stuck`
      ),
      remove: db.prepare<[number]>('DELETE FROM audits WHERE event_no = ?'),
      removeAll: db.prepare('DELETE FROM audits'),
      listed: db.prepare<[number], number>('SELECT baseband_requested FROM events WHERE event_no = ?').pluck(),
      setLook: db.prepare<{ event_no: number; verdict: string | null; due_at: number | null; stuck: string }>(
        'UPDATE audits SET verdict = @verdict, due_at = @due_at, stuck = @stuck WHERE event_no = @event_no'
      ),
      change: db.prepare<[number, string]>('INSERT INTO audit_changes (event_no, message) VALUES (?, ?)'),
      forgetChanges: db.prepare<[number]>('DELETE FROM audit_changes WHERE seq <= (SELECT max(seq) FROM audit_changes) - ?'),
      window: db.prepare<{ afterTime: number; afterNo: number; end: number; limit: number }, WindowRow>(
        `SELECT event_no, event_time, verdict, report, fixed FROM audits
         WHERE (event_time, event_no) > (@afterTime, @afterNo) AND event_time < @end
         ORDER BY event_time, event_no LIMIT @limit`
      ),
      due: db.prepare<[number, number], number>('SELECT event_no FROM audits WHERE due_at <= ? ORDER BY due_at LIMIT ?').pluck()
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
    const touched = new Map<number, KeptAudit | 'absent'>()
    for (const [eventNo, change] of changes) {
      let kept = touched.get(eventNo)
      if (kept === undefined) {
        kept = this.find(eventNo) ?? 'absent'
        touched.set(eventNo, kept)
      }
      if (kept !== 'absent') change(kept.facts)
    }
    const settings = this.settings()
    const entering: number[] = []
    for (const [eventNo, kept] of touched) {
      if (kept !== 'absent') this.write(kept.facts, kept.look, settings)
      else if (this.statements.listed.get(eventNo) === 1) entering.push(eventNo)
    }
    // Read together: a bulk load that writes its events after their other records brings a batch in at once.
    for (const [eventNo, records] of this.records.of(entering)) this.write(factsOf(eventNo, records, this.sites), NOT_AUDITED, settings)
  }

  /** Writes the facts and their look, or removes the row of an event that left the audit; `before` null records no verdict change. */
  private write(facts: KeptFacts, before: KeptLook | null, settings: AuditSettings): VerdictChange | null {
    compact(facts)
    const after = lookAt(facts, settings)
    const event = facts.event
    if (event === null || !event.listed) {
      this.statements.remove.run(facts.event_no)
    } else {
      const report = after.report!
      const fixed = fixedAuditOf(report, after.audit!)
      this.statements.put.run({
        event_no: facts.event_no,
        facts: JSON.stringify(facts),
        report: fixed !== null ? null : JSON.stringify(report),
        fixed: fixed?.json ?? null,
        event_time: event.timestamp,
        verdict: after.look.verdict,
        due_at: after.look.due_at,
        stuck: JSON.stringify(after.look.stuck)
      })
    }
    return before === null ? null : this.recordChange(facts, before, after, settings)
  }

  private recordChange(facts: KeptFacts, before: KeptLook, after: Look, settings: AuditSettings): VerdictChange | null {
    const change = verdictChange(facts, before, after, settings)
    if (change !== null) this.statements.change.run(facts.event_no, JSON.stringify(change))
    return change
  }

  /**
   * Makes every kept row again from the records (`facts`), or only looks at every row again with
   * the configured deadlines (`looks`), a page at a time inside the caller's transaction. No verdict
   * change is recorded: nobody streams while a store opens, and a store's first build would record one per event.
   */
  rebuild(what: 'facts' | 'looks'): void {
    const settings = this.settings()
    const pageSize = 1000
    if (what === 'facts') this.statements.removeAll.run()
    const next = (after: number) => (what === 'facts' ? this.records.listedAfter(after, pageSize) : this.records.keptAfter(after, pageSize))
    for (let eventNos = next(-1); eventNos.length > 0; eventNos = next(eventNos.at(-1)!)) {
      if (what === 'facts') {
        for (const [eventNo, records] of this.records.of(eventNos)) this.write(factsOf(eventNo, records, this.sites), null, settings)
      } else {
        for (const eventNo of eventNos) this.write(this.find(eventNo)!.facts, null, settings)
      }
    }
  }

  find(eventNo: number): KeptAudit | null {
    const row = this.statements.get.get(eventNo)
    return row === undefined ? null : toKept(row)
  }

  windowPage(window: TimeWindow, after: EventPosition | undefined, limit: number): WindowEntry[] {
    const position = after ?? { timestamp: window.start, event_no: -1 }
    return this.statements.window.all({ afterTime: position.timestamp, afterNo: position.event_no, end: window.end, limit }).map(toWindowEntry)
  }

  due(now: number, limit: number): number[] {
    return this.statements.due.all(now, limit)
  }

  settle(eventNos: readonly number[], now: number): VerdictChange[] {
    const settings = this.settings(now)
    const changes: VerdictChange[] = []
    this.db.transaction(() => {
      for (const eventNo of eventNos) {
        const row = this.statements.get.get(eventNo)
        if (row === undefined) continue
        const { facts, look: before } = toKept(row)
        const after = lookAt(facts, settings)
        if (sameLook(before, after.look)) continue
        this.statements.setLook.run({ event_no: eventNo, verdict: after.look.verdict, due_at: after.look.due_at, stuck: JSON.stringify(after.look.stuck) })
        const change = this.recordChange(facts, before, after, settings)
        if (change !== null) changes.push(change)
      }
      this.statements.forgetChanges.run(KEPT_CHANGES)
    }).immediate()
    return changes
  }

  verify(after: number, limit: number, now: number): { checked: number; mismatches: AuditMismatch[]; last: number | null } {
    const settings = this.settings(now)
    return this.db
      .transaction(() => {
        // The events in the audit and the kept rows: a row of an event no longer in it is a mismatch too.
        const eventNos = this.records.listedOrKeptAfter(after, limit)
        const mismatches: AuditMismatch[] = []
        for (const [eventNo, records] of this.records.of(eventNos)) {
          const recomputed = factsOf(eventNo, records, this.sites)
          const keptAudit = this.find(eventNo)
          const inAudit = recomputed.event?.listed === true
          if (inAudit ? keptAudit !== null && isDeepStrictEqual(keptAudit.facts, recomputed) : keptAudit === null) continue
          mismatches.push({ event_no: eventNo, kept: keptAudit?.facts ?? null, recomputed })
          this.write(recomputed, keptAudit?.look ?? NOT_AUDITED, settings)
        }
        return { checked: eventNos.length, mismatches, last: eventNos.length < limit ? null : eventNos.at(-1)! }
      })
      .immediate()
  }
}
