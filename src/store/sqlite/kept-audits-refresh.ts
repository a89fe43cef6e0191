import type Database from 'better-sqlite3'
import { factsSignature, lookSignature } from '../../domain/audit/signature.js'
import type { StageDeadlines } from '../../domain/stage-deadlines.js'
import type { Sites } from '../../vocabulary.js'
import type { RebuildProgress } from '../port.js'
import type { SqliteKeptInWrites } from './kept-in-writes.js'
import { PLAN, readPlan, type Plan } from './rebuild-plan.js'

/** Events made again in one transaction: the write lock is held for one such batch at a time. */
export const REBUILD_BATCH = 500

/** What one batch came to: more to do, or the audit made (`by` this batch, with what it made again, or found made by another process). */
export type RebuildStep = { made: false; progress: RebuildProgress } | { made: true; by?: { what: 'facts' | 'looks'; first: boolean } }

/**
 * Brings the kept audit in line with the configuration and this release, as refreshOutputTexts
 * does the output texts: every row made again from the records when the sites or the reduction of
 * records to facts changed (factsSignature), or when there are none yet (a store the service has
 * not kept an audit in before); every row looked at again when only the deadlines or the rules,
 * wording, order or forms of the audit changed (lookSignature).
 *
 * The work is done a batch at a time, in order of event number, each batch one IMMEDIATE
 * transaction that also records how far it went: other processes write between two batches, and a
 * process killed during one leaves the batches before it done. Of several processes doing it at
 * once, each batch takes the stretch after the last one committed, so no event is done twice. The
 * signatures are stored with the last batch, which removes the plan.
 */
export class KeptAuditsRefresh {
  private readonly statements
  private readonly facts: string
  private readonly looks: string

  constructor(
    db: Database.Database,
    private readonly audits: SqliteKeptInWrites,
    sites: Sites,
    deadlines: StageDeadlines,
    private readonly batch = REBUILD_BATCH
  ) {
    this.facts = factsSignature(sites)
    this.looks = lookSignature(deadlines)
    const read = db.prepare<[string], string>('SELECT value FROM settings WHERE name = ?').pluck()
    this.statements = {
      read,
      mark: db.prepare<[string, string]>('INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value'),
      forget: db.prepare<[string]>('DELETE FROM settings WHERE name = ?'),
      // Partial indexes hold these rows, so neither count reads a report.
      listed: db.prepare<[], number>('SELECT count(*) FROM events WHERE baseband_requested = 1').pluck(),
      kept: db.prepare<[], number>('SELECT count(*) FROM audits WHERE looked_at IS NOT NULL').pluck(),
      step: db.transaction(() => this.stepInTransaction())
    }
  }

  /**
   * Whether the kept audit was made under other signatures than this process's, or a rebuild was
   * left unfinished (one under other settings leaves rows made under neither): reads, nothing written.
   */
  due(): boolean {
    const { read } = this.statements
    return read.get('kept_audit_facts') !== this.facts || read.get('kept_audit_looks') !== this.looks || read.get(PLAN) !== undefined
  }

  /** The rebuild under way for this process's signatures, as the settings say: undefined before its first batch, and once it is done. */
  underWay(): (RebuildProgress & Pick<Plan, 'what' | 'first'>) | undefined {
    const plan = this.plan()
    return plan === undefined ? undefined : { what: plan.what, first: plan.first, done: plan.done, total: plan.total }
  }

  /** A rebuild left under way under any signatures: how far it went. */
  left(): RebuildProgress | undefined {
    const plan = readPlan(this.statements.read.get(PLAN))
    return plan === undefined ? undefined : { done: plan.done, total: plan.total }
  }

  /** One batch, in its own IMMEDIATE transaction: throws SQLITE_BUSY at once while another process holds the write lock. */
  step(): RebuildStep {
    return this.statements.step.immediate()
  }

  private plan(): Plan | undefined {
    const plan = readPlan(this.statements.read.get(PLAN))
    return plan?.facts === this.facts && plan.looks === this.looks ? plan : undefined
  }

  private stepInTransaction(): RebuildStep {
    const { mark, forget } = this.statements
    if (!this.due()) return { made: true }
    const plan = this.plan() ?? this.newPlan()
    const eventNos = this.audits.rebuildAfter(plan.what, plan.after, this.batch)
    if (eventNos.length < this.batch) {
      mark.run('kept_audit_facts', this.facts)
      mark.run('kept_audit_looks', this.looks)
      forget.run(PLAN)
      return { made: true, by: { what: plan.what, first: plan.first } }
    }
    const next: Plan = { ...plan, after: eventNos.at(-1)!, done: plan.done + eventNos.length }
    mark.run(PLAN, JSON.stringify(next))
    return { made: false, progress: { done: next.done, total: next.total } }
  }

  /**
   * A rebuild from the start. A plan left by a rebuild under other signatures (a start killed, then
   * one with other settings) counts as facts made otherwise when it was making facts: some rows then
   * hold facts of neither configuration.
   */
  private newPlan(): Plan {
    const { read } = this.statements
    const stored = read.get('kept_audit_facts')
    const left = readPlan(read.get(PLAN))
    const what = stored !== this.facts || left?.what === 'facts' ? 'facts' : 'looks'
    const total = what === 'facts' ? this.statements.listed.get()! : this.statements.kept.get()!
    return { facts: this.facts, looks: this.looks, what, first: stored === undefined || left?.first === true, after: -1, done: 0, total }
  }
}
