import { Rebuild, type KeptAuditState, type RebuildProgress, type RebuildStep } from '../../kept-audit/rebuild.js'
import type { SqliteConnection } from './connection.js'
import { isLockedOut } from './database.js'
import { throughBusy } from './through-busy.js'

/**
 * When a start rebuilds a kept audit that is due:
 * - `before-open`: every batch before the store is handed over (commands, and tests), as before a
 *   server listened;
 * - `while-serving`: the first batch at open, the others one at a time between requests, while the
 *   store serves everything but the kept audit (a server);
 * - `left`: the first batch at open, the rest left to the processes that serve (the primary of
 *   several workers).
 * Whatever the mode, a store with little to do (a new one) is made at open.
 */
export type RebuildWhen = 'before-open' | 'while-serving' | 'left'

/** Between two tries of a batch that found another process's write lock. */
const LOCKED_RETRY_MS = 50
/** Between two tries of a batch that failed otherwise (the file unusable for now). */
const FAILED_RETRY_MS = 1000

export interface RebuildOptions {
  /** Events a batch: REBUILD_BATCH unless given. */
  batch?: number
  /** How long a batch done before open may wait for another process's lock. */
  busyTimeoutMs: number
  notify: (line: string) => void
  /** How the loop gives the event loop back before each batch: setImmediate unless a test steps it. */
  pace?: (next: () => void) => void
}

const count = (n: number) => n.toLocaleString('en-US')
const fromWhat = (what: 'facts' | 'looks') => (what === 'facts' ? 'from the records' : 'from the kept facts')

/**
 * The kept audit of one store while it is rebuilt (src/kept-audit/rebuild.ts): what `Store.keptAudit`
 * answers, and the loop that runs the batches of a serving instance.
 */
export class KeptAuditRebuild implements KeptAuditState {
  readonly made: Promise<void>
  private resolveMade!: () => void
  private progress: RebuildProgress | null = null
  private stopped = false
  private timer: NodeJS.Timeout | NodeJS.Immediate | undefined
  private failing = false
  private refresh: { connection: SqliteConnection; refresh: SqliteRebuild } | undefined

  constructor(private readonly options: RebuildOptions) {
    this.made = new Promise((resolve) => (this.resolveMade = resolve))
  }

  /** Whether a rebuild is under way: writes then ask how far it went (audits.ts, keep). */
  get active(): boolean {
    return this.progress !== null
  }

  rebuilding(): RebuildProgress | null {
    return this.progress
  }

  /**
   * At a start that may refresh the kept state: when the audit is due, says so, does the first
   * batch (every batch `before-open`) on `connection`, and tells whether batches remain.
   */
  begin(connection: SqliteConnection, when: RebuildWhen): boolean {
    const refresh = this.rebuildOf(connection)
    if (!refresh.due()) return this.done()
    const left = refresh.underWay()
    const step = throughBusy(() => refresh.step(), this.options.busyTimeoutMs)
    if (step.made) return this.done(step)
    const plan = refresh.underWay()!
    this.progress = step.progress
    // Done before: by a start that stopped half way, or by another process starting beside this one.
    const at = left === undefined ? '' : `, going on from ${count(left.done)} of ${count(left.total)} events done before this start`
    this.options.notify(
      `The kept audit is being made again (${fromWhat(plan.what)}): other settings, or a release that audits otherwise${at}. ` +
        `${count(plan.total)} events in all; reads of the audit answer 503 until it is made.`
    )
    if (when !== 'before-open') return true
    for (;;) {
      const next = throughBusy(() => refresh.step(), this.options.busyTimeoutMs)
      if (next.made) return this.done(next)
      this.progress = next.progress
    }
  }

  /**
   * For a process that only reads, and makes nothing: a rebuild left under way (a start killed, or
   * one serving now) leaves rows made under other settings, so its reads of the audit wait as a
   * server's do.
   */
  observe(connection: SqliteConnection): void {
    this.progress = this.rebuildOf(connection).left() ?? null
  }

  /** Runs the remaining batches, each on the store's connection of the moment, yielding to requests between them. */
  continue(connection: () => SqliteConnection): void {
    const next = () => {
      this.timer = undefined
      if (this.stopped) return
      let step: RebuildStep
      try {
        step = this.rebuildOf(connection()).step()
      } catch (error) {
        if (this.stopped) return
        const locked = isLockedOut(error)
        if (!locked && !this.failing) {
          this.failing = true
          this.options.notify(`The kept audit cannot be made again for now (${error instanceof Error ? error.message : String(error)}); trying again.`)
        }
        this.timer = setTimeout(next, locked ? LOCKED_RETRY_MS : FAILED_RETRY_MS)
        return
      }
      this.failing = false
      if (step.made) return void this.done(step)
      this.progress = step.progress
      this.yieldThen(next)
    }
    this.yieldThen(next)
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

  private rebuildOf(connection: SqliteConnection): SqliteRebuild {
    if (this.refresh?.connection !== connection) this.refresh = { connection, refresh: new SqliteRebuild(connection, this.options.batch) }
    return this.refresh.refresh
  }
}

/** The rebuild on one connection, whose every answer comes at once. */
class SqliteRebuild {
  private readonly rebuild: Rebuild

  constructor(
    private readonly connection: SqliteConnection,
    batch: number | undefined
  ) {
    this.rebuild = new Rebuild(connection.keptRows, connection.keeperConfig, batch)
  }

  /** Whether the rows were made under other signatures, or a rebuild was left unfinished: reads, nothing written. */
  due(): boolean {
    return this.rebuild.due(this.connection.keptRows.rebuildRecord())
  }

  /** The rebuild under way under this process's signatures, as recorded. */
  underWay() {
    return this.rebuild.underWay(this.connection.keptRows.rebuildRecord())
  }

  /** A rebuild left under way under any signatures: how far it went. */
  left(): RebuildProgress | undefined {
    const plan = this.connection.keptRows.rebuildRecord().plan
    return plan === undefined ? undefined : { done: plan.done, total: plan.total }
  }

  /** One batch, in its own IMMEDIATE transaction: throws SQLITE_BUSY at once while another process holds the write lock. */
  step(): RebuildStep {
    return this.rebuild.step() as RebuildStep
  }
}
