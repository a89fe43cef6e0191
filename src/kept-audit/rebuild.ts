import { factsOf } from '../domain/audit/kept-facts.js'
import { answer, answers, type Answers, type Maybe } from '../maybe.js'
import { StoreUnavailableError } from '../store-unavailable.js'
import { factsSignature, lookSignature } from '../domain/audit/signature.js'
import { isUnreadableContent } from './kept-check.js'
import { beforeOf, keptWriteOf, type KeptWrite } from './keeping.js'
import type { KeeperConfig } from './keeper.js'
import type { KeptStorage, RowWrite } from './storage.js'

/** Events rebuilt a batch: on SQLite the write lock is held for one batch at a time. */
export const REBUILD_BATCH = 500

/** How far a kept audit being rebuilt has come: events done, of about `total` (events written meanwhile add to both). */
export interface RebuildProgress {
  done: number
  total: number
}

/** Whether the kept audit is made, or being rebuilt while the instance serves (nothing is read from it meanwhile). */
export interface KeptAuditState {
  rebuilding(): RebuildProgress | null
  /** Resolves once the kept audit is made (at once when it was), or once the store closes first. */
  readonly made: Promise<void>
}

export const KEPT_AUDIT_MADE: KeptAuditState = { rebuilding: () => null, made: Promise.resolve() }

/** A read of the kept audit or its verdict changes while it is rebuilt: 503 with its progress, never a half-made verdict. */
export class KeptAuditRebuildingError extends StoreUnavailableError {
  override name = 'KeptAuditRebuildingError'
  constructor(readonly progress: RebuildProgress) {
    super(rebuildingReason(progress))
  }
}

const count = (n: number) => n.toLocaleString('en-US')

export const rebuildingReason = ({ done, total }: RebuildProgress) =>
  `The kept audit is being made again (other settings, or a release that audits otherwise): ${count(done)} of ${count(Math.max(done, total))} events done; try again shortly.`

export interface Signatures {
  facts: string
  looks: string
}

/** A rebuild under way as recorded with each batch: a start under the same signatures goes on after `after`. */
export interface Plan extends RebuildProgress, Signatures {
  what: 'facts' | 'looks'
  /** No kept audit was there before (a store's first): nothing to say when it is made. */
  first: boolean
  after: number
}

/** What the store records of its rows: the signatures they were last all made under, and a rebuild left under way. */
export interface RebuildRecord {
  facts: string | undefined
  looks: string | undefined
  plan: Plan | undefined
}

/** What one batch came to: more to do, or the audit made (`by` this batch, or found made by another process). */
export type RebuildStep = { made: false; progress: RebuildProgress } | { made: true; by?: Pick<Plan, 'what' | 'first'> }

export interface RebuildStorage extends KeptStorage {
  rebuildRecord(): Maybe<RebuildRecord>
  /** Records the plan after a batch; null once all is made (the signatures stored, the plan gone). */
  recordRebuild(plan: Plan | null, signatures: Signatures): Maybe<void>
  /** About how many events a rebuild of `what` goes through. */
  rebuildTotal(what: Plan['what']): Maybe<number>
  keptAfter(after: number, limit: number): Maybe<number[]>
  /** One batch: SQLite in one IMMEDIATE transaction, so each batch takes the stretch after the last committed; MongoDB as it comes. */
  batch<T>(work: () => Maybe<T>): Maybe<T>
}

/** A plan as stored, when it is one (a store may hold another release's, or a hand's). */
export function readPlan(value: unknown): Plan | undefined {
  try {
    const plan = (typeof value === 'string' ? JSON.parse(value) : value) as Partial<Plan> | null
    return typeof plan?.after === 'number' && (plan.what === 'facts' || plan.what === 'looks') ? (plan as Plan) : undefined
  } catch {
    return undefined
  }
}

/**
 * Makes the kept rows again a batch at a time, each recording how far it went: from the records when factsSignature
 * changed (with no verdict change: a store's first would record one an event), from the kept facts when only lookSignature did.
 */
export class Rebuild {
  readonly signatures: Signatures

  constructor(
    private readonly storage: RebuildStorage,
    private readonly config: KeeperConfig,
    private readonly batchSize = REBUILD_BATCH
  ) {
    this.signatures = { facts: factsSignature(config.sites), looks: lookSignature(config.deadlines) }
  }

  /** Whether the rows were made under other signatures, or a rebuild was left unfinished (one under other settings leaves rows made under neither). */
  due(record: RebuildRecord): boolean {
    return record.facts !== this.signatures.facts || record.looks !== this.signatures.looks || record.plan !== undefined
  }

  /** The rebuild under way under this process's signatures, as recorded: undefined before its first batch, and once it is done. */
  underWay(record: RebuildRecord): Plan | undefined {
    const { plan } = record
    return plan?.facts === this.signatures.facts && plan.looks === this.signatures.looks ? plan : undefined
  }

  step(): Maybe<RebuildStep> {
    return this.storage.batch(() => answers(this.steps()))
  }

  /** Records the due rebuild without making a row, for SQLite's output texts to come first (the rebuild reads their baseband flag). */
  plan(): Maybe<Plan | undefined> {
    return this.storage.batch(() => answers(this.planned()))
  }

  private *planned(): Answers<Plan | undefined> {
    const record = yield* answer(this.storage.rebuildRecord())
    if (!this.due(record)) return undefined
    const underWay = this.underWay(record)
    if (underWay !== undefined) return underWay
    const plan = yield* this.newPlan(record)
    yield* answer(this.storage.recordRebuild(plan, this.signatures))
    return plan
  }

  private *steps(): Answers<RebuildStep> {
    const { storage, batchSize, signatures } = this
    const record = yield* answer(storage.rebuildRecord())
    if (!this.due(record)) return { made: true }
    const plan = this.underWay(record) ?? (yield* this.newPlan(record))
    const settings = { sites: this.config.sites, deadlines: this.config.deadlines, now: this.config.clock() }
    const writes: RowWrite[] = []
    const made = (eventNo: number, make: () => KeptWrite, held: RowWrite['held']) => {
      try {
        writes.push({ event_no: eventNo, held, made: make() })
      } catch (error) {
        if (!isUnreadableContent(error)) throw error
      }
    }
    let eventNos: number[]
    if (plan.what === 'looks') {
      eventNos = yield* answer(storage.keptAfter(plan.after, batchSize))
      for (const [eventNo, row] of yield* answer(storage.rows(eventNos))) {
        if (!('error' in row)) made(eventNo, () => keptWriteOf(row.facts, beforeOf(row), settings), row)
      }
    } else {
      eventNos = yield* answer(storage.auditedAfter(plan.after, batchSize))
      const { rows, records } = yield* answer(storage.read(eventNos))
      for (const [eventNo, read] of records) {
        if (!('error' in read)) made(eventNo, () => keptWriteOf(factsOf(eventNo, read, settings.sites), null, settings), rows.get(eventNo) ?? { existed: false, rev: undefined })
      }
    }
    // A write that finds its row changed lost to a write of the event's records, which made the row from them.
    yield* answer(storage.write(writes, settings.now))
    if (eventNos.length < batchSize) {
      yield* answer(storage.recordRebuild(null, signatures))
      return { made: true, by: { what: plan.what, first: plan.first } }
    }
    const next: Plan = { ...plan, after: eventNos.at(-1)!, done: plan.done + eventNos.length }
    yield* answer(storage.recordRebuild(next, signatures))
    return { made: false, progress: { done: next.done, total: next.total } }
  }

  /** A rebuild from the start. A plan left under other signatures that was making facts leaves rows of neither configuration: facts again. */
  private *newPlan(record: RebuildRecord): Answers<Plan> {
    const what = record.facts !== this.signatures.facts || record.plan?.what === 'facts' ? 'facts' : 'looks'
    const total = yield* answer(this.storage.rebuildTotal(what))
    return { ...this.signatures, what, first: record.facts === undefined || record.plan?.first === true, after: -1, done: 0, total }
  }
}
