import { Rebuild, type KeptAuditState, type Plan, type RebuildProgress, type RebuildStep } from '../../kept-audit/rebuild.js'
import type { SqliteConnection } from './connection.js'
import { isLockedOut, throughBusy } from './database.js'
import { OutputTextsRewrite, type OutputTextsState, type TextsMadeUpTo, type TextsStep } from './output-texts.js'

/**
 * When a start makes again the output texts and kept audit that are due (the texts first: the
 * audit's rebuild reads the baseband flag they hold): `before-open`, every batch before the store
 * is handed over (commands, tests); `while-serving`, the first at open, the rest between requests
 * while the store serves all but the kept audit (a server); `left`, the first at open, the rest
 * left to the serving processes (the primary of several workers). A new store is made at open.
 */
export type RebuildWhen = 'before-open' | 'while-serving' | 'left'

/** Between two tries of a batch that found another process's write lock, or failed otherwise (the file unusable for now). */
const LOCKED_RETRY_MS = 50
const FAILED_RETRY_MS = 1000

/** As SqliteOptions gives them (rebuildBatch, textsBatch, rebuildPace). */
interface RebuildOptions {
  batch: number | undefined
  textsBatch: number | undefined
  busyTimeoutMs: number
  notify: (line: string) => void
  pace: ((next: () => void) => void) | undefined
}

const count = (n: number) => n.toLocaleString('en-US')
const fromWhat = (what: 'facts' | 'looks') => (what === 'facts' ? 'from the records' : 'from the kept facts')
const WHY_TEXTS = 'other sites, or a release that writes them otherwise'

/** The output texts then the kept audit while a start makes them again: what reads ask, and the one loop of their batches. */
export class KeptAuditRebuild implements KeptAuditState, OutputTextsState {
  readonly made: Promise<void>
  private resolveMade!: () => void
  private progress: RebuildProgress | null = null
  /** How far the output texts are made while a rewrite is under way; null once they are. */
  private texts: TextsMadeUpTo | null = null
  private textsSaid = false
  private stopped = false
  private timer: NodeJS.Timeout | NodeJS.Immediate | undefined
  private failing = false
  private on: { connection: SqliteConnection; rebuild: Rebuild; rewrite: OutputTextsRewrite } | undefined

  constructor(private readonly options: RebuildOptions) {
    this.made = new Promise((resolve) => (this.resolveMade = resolve))
  }

  /** Whether a rebuild is under way: writes then ask how far it went (kept-in-writes.ts). */
  get active(): boolean {
    return this.progress !== null
  }

  rebuilding(): RebuildProgress | null {
    return this.progress
  }

  underWay(): TextsMadeUpTo | null {
    return this.texts
  }

  /**
   * At a start that may refresh the kept state: the texts' first batch (every batch `before-open`),
   * then, once made, the kept audit's likewise; whether batches remain. While the texts are made, a
   * due kept audit is recorded as under way (reads wait, writes make facts from records).
   */
  begin(connection: SqliteConnection, when: RebuildWhen): boolean {
    const { rebuild, record } = this.of(connection)
    const busy = <T>(work: () => T) => throughBusy(work, this.options.busyTimeoutMs)
    if (!this.beginTexts(connection, when)) {
      const left = rebuild.underWay(record())
      const plan = rebuild.due(record()) ? busy(() => rebuild.plan() as Plan | undefined) : undefined
      if (plan === undefined) this.resolveMade()
      else this.begun(plan, left)
      return true
    }
    if (!rebuild.due(record())) return this.done()
    const left = rebuild.underWay(record())
    let step = busy(() => rebuild.step() as RebuildStep)
    if (step.made) return this.done(step)
    this.begun(rebuild.underWay(record())!, left)
    this.progress = step.progress
    if (when !== 'before-open') return true
    for (;;) {
      step = busy(() => rebuild.step() as RebuildStep)
      if (step.made) return this.done(step)
      this.progress = step.progress
    }
  }

  /** The output texts' first batch, or every batch `before-open`: whether they are made. */
  private beginTexts(connection: SqliteConnection, when: RebuildWhen): boolean {
    const { rewrite } = this.of(connection)
    // Nothing to do is one read: no write lock taken.
    if (rewrite.underWay() === null) return true
    const left = rewrite.left()
    let step = throughBusy(rewrite.step, this.options.busyTimeoutMs)
    while (when === 'before-open' && !step.made) step = throughBusy(rewrite.step, this.options.busyTimeoutMs)
    if (step.made) return this.textsMade(step)
    this.texts = step.upTo
    const at = left ? ', going on from where a start before this one stopped' : ''
    this.textsSaid = true
    this.options.notify(
      `The output texts are being made again (${WHY_TEXTS})${at}, a batch at a time while the instance serves; ` +
        'until they are made, the event list and the baseband callbacks send what the records say.'
    )
    return false
  }

  /** The end is said when the texts had been made before, or their making was said. */
  private textsMade(step: TextsStep & { made: true }): true {
    this.texts = null
    if (step.again || this.textsSaid) this.options.notify(`The output texts were made again (${WHY_TEXTS}).`)
    this.textsSaid = false
    return true
  }

  /** Says that the kept audit is being made again, and from where when a start before this one went part of the way (`left`). */
  private begun(plan: Plan, left: Plan | undefined): void {
    this.progress = { done: plan.done, total: plan.total }
    const at = left === undefined || left.done === 0 ? '' : `, going on from ${count(left.done)} of ${count(left.total)} events done before this start`
    this.options.notify(
      `The kept audit is being made again (${fromWhat(plan.what)}): other settings, or a release that audits otherwise${at}. ` +
        `${count(plan.total)} events in all; reads of the audit answer 503 until it is made.`
    )
  }

  /** For a process that only reads: a rebuild left under way leaves rows made under other settings, so its reads wait as a server's do. */
  observe(connection: SqliteConnection, audit: boolean): void {
    const { rewrite, record } = this.of(connection)
    this.texts = rewrite.underWay()
    const left = audit ? record().plan : undefined
    if (audit) this.progress = left === undefined ? null : { done: left.done, total: left.total }
  }

  /** Runs the remaining batches, each on the store's connection of the moment, yielding to requests between them. */
  continue(connection: () => SqliteConnection): void {
    const next = () => {
      this.timer = undefined
      if (this.stopped) return
      let more: boolean
      try {
        more = this.batchOn(connection())
      } catch (error) {
        if (this.stopped) return
        const locked = isLockedOut(error)
        if (!locked && !this.failing) {
          this.failing = true
          const what = this.texts === null ? 'The kept audit' : 'The output texts'
          this.options.notify(`${what} cannot be made again for now (${error instanceof Error ? error.message : String(error)}); trying again.`)
        }
        this.timer = setTimeout(next, locked ? LOCKED_RETRY_MS : FAILED_RETRY_MS)
        return
      }
      this.failing = false
      if (more) this.yieldThen(next)
    }
    this.yieldThen(next)
  }

  /** One batch of what is left, the texts' then the kept audit's: whether any is left. */
  private batchOn(connection: SqliteConnection): boolean {
    const { rewrite, rebuild, record } = this.of(connection)
    if (this.texts !== null) {
      const texts = rewrite.step()
      if (texts.made) this.textsMade(texts)
      else this.texts = texts.upTo
      return true
    }
    // Only the texts were due: the audit is made.
    if (this.progress === null && !rebuild.due(record())) return this.done()
    const step = rebuild.step() as RebuildStep
    if (step.made) return this.done(step)
    this.progress = step.progress
    return true
  }

  private yieldThen(next: () => void): void {
    if (this.options.pace === undefined) this.timer = setImmediate(next)
    else this.options.pace(next)
  }

  /** Stops the batches (the store closes): a rebuild under way goes on at the next start. */
  stop(): void {
    this.stopped = true
    if (this.timer !== undefined) {
      clearTimeout(this.timer as NodeJS.Timeout)
      clearImmediate(this.timer as NodeJS.Immediate)
    }
    this.resolveMade()
  }

  private done(step?: RebuildStep): false {
    const by = step?.made === true ? step.by : undefined
    const wasRebuilding = this.progress !== null
    this.progress = null
    if (by !== undefined && !by.first) this.options.notify(`The kept audit was made again (${fromWhat(by.what)}): other settings, or a release that audits otherwise.`)
    else if (wasRebuilding) this.options.notify('The kept audit is made: its reads are served again.')
    this.resolveMade()
    return false
  }

  /** The rebuild and the rewrite on `connection`, made again for a new one (a reopen); `record` is how far the rebuild went as stored. */
  private of(connection: SqliteConnection) {
    if (this.on?.connection !== connection) {
      const { db, keptRows, keeperConfig } = connection
      this.on = { connection, rebuild: new Rebuild(keptRows, keeperConfig, this.options.batch), rewrite: new OutputTextsRewrite(db, keeperConfig.sites, this.options.textsBatch) }
    }
    const { rebuild, rewrite } = this.on
    return { rebuild, rewrite, record: () => connection.keptRows.rebuildRecord() }
  }
}
