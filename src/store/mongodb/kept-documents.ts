import type { Collection, Db, Document, Filter, Sort } from 'mongodb'
import type { EventRecords, KeptFacts } from '../../domain/audit/kept-facts.js'
import type { KeptLook } from '../../domain/audit/kept-look.js'
import type { KeptReport } from '../../domain/audit/kept-report.js'
import type { EventPosition } from '../../domain/records.js'
import type { TimeWindow } from '../../domain/time-window.js'
import { isKeptReport } from '../../kept-audit/kept-check.js'
import { readPlan, type Plan, type RebuildRecord, type RebuildStorage, type Signatures } from '../../kept-audit/rebuild.js'
import type { Held, KeptRead, Maybe, RowWrite, ServedRow, WindowRow } from '../../kept-audit/storage.js'
import type { AuditRecords } from './audit-records.js'
import { isDuplicateKey } from './driver-errors.js'
import { documentsOf, numberIn, plain } from './documents.js'
import { COLLECTIONS } from './indexes.js'

/** The `_id` of the one document of the collection that is no event's: the settings the kept looks were made with. */
export const AUDIT_SETTINGS_ID = 'settings'

/** A document's kept audit: everything but the recorded change, which only the feed reads. */
const KEPT_ONLY = { projection: { _id: 0, change: 0 } } as const

const stringsIn = (value: unknown): string[] => (Array.isArray(value) ? value.filter((item) => typeof item === 'string') : [])
const numberOrNull = (value: unknown): number | null => {
  const number = numberIn(value, Number.NaN)
  return Number.isNaN(number) ? null : number
}

/** A stored document as the keeper reads it, with its revision (undefined for one written by hand) and its look's clock. */
function keptIn(stored: Document): ServedRow {
  const document = plain(stored) as Record<string, unknown>
  return {
    existed: true,
    facts: document.facts as KeptFacts,
    look: {
      verdict: typeof document.verdict === 'string' ? (document.verdict as KeptLook['verdict']) : null,
      due_at: numberOrNull(document.due_at),
      stuck: stringsIn(document.stuck)
    },
    // What the window serves: the report of a listed document (the window's index reads `listed`).
    entry: document.listed === true ? (document.report as KeptReport | null) : null,
    event_time: numberOrNull(document.event_time),
    rev: typeof document.rev === 'number' ? document.rev : undefined,
    looked_at: numberOrNull(document.looked_at)
  }
}

/** What JSON keeps of a value: stored so, a document reads back equal to what was written (the driver stores `undefined` as null). */
const asStored = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T

const lookFields = (look: KeptLook, at: number) => ({ verdict: look.verdict, due_at: look.due_at, stuck: look.stuck, looked_at: at })

/** The facts, the report a window read takes (kept-report.ts), and what the window index reads of them. */
const factFields = (facts: KeptFacts, report: KeptReport | null) => ({
  facts,
  report: asStored(report),
  listed: facts.event?.listed === true,
  event_time: facts.event?.timestamp ?? null
})

/** One window page in (event_time, event_no) order, written as keysetFilter (events.ts) writes it, for the {listed, event_time, event_no} index. */
function windowFilter(window: TimeWindow, after: EventPosition | undefined): Filter<Document> {
  if (after === undefined) return { listed: true, event_time: { $gte: window.start, $lt: window.end } }
  const ties = [{ event_time: { $gt: after.timestamp } }, { event_no: { $gt: after.event_no } }]
  return { listed: true, event_time: { $gte: after.timestamp, $lt: window.end }, $or: ties }
}

/** The condition a write holds the document to: the revision read, or no document (nor revision) yet. */
const sameRevision = (eventNo: number, { rev }: Held) => ({ event_no: eventNo, rev: rev === undefined ? { $exists: false } : { $eq: rev } })

/** A rebuild under way as the settings document holds it: the plan (rebuild.ts) in an earlier release's words, to go on with it. */
interface RebuildMark {
  facts_signature: string
  looks_signature: string
  from: 'records' | 'facts'
  after: number
  done?: number
  total?: number
  first?: boolean
}

type SettingsDocument = { _id: string; facts_signature?: string; looks_signature?: string; rebuild?: RebuildMark | null }

const planOf = (mark: RebuildMark | null | undefined): Plan | undefined =>
  mark === null || mark === undefined
    ? undefined
    : readPlan({ facts: mark.facts_signature, looks: mark.looks_signature, what: mark.from === 'records' ? 'facts' : 'looks', after: mark.after, done: mark.done ?? 0, total: mark.total ?? 0, first: mark.first ?? false })

const markOf = ({ facts, looks, what, after, done, total, first }: Plan): RebuildMark => {
  return { facts_signature: facts, looks_signature: looks, from: what === 'facts' ? 'records' : 'facts', after, done, total, first }
}

/**
 * The kept audit: one document per event with a record, `{event_no, facts, report, verdict, due_at, stuck, listed,
 * event_time, looked_at, rev, change?}`. `listed` and `event_time` make the window one index range. Every write is a
 * compare-and-set on `rev`, so instances and the watcher write without a transaction. `change`, `{rev, value}`, is
 * the verdict change that write recorded, for the verdict feed; the rev makes it a new value the stream reports.
 */
export class MongoKeptDocuments implements RebuildStorage {
  readonly keepsEveryEvent = true
  private readonly audits: Collection
  private readonly settings: Collection<SettingsDocument>

  constructor(
    db: Db,
    private readonly reader: AuditRecords
  ) {
    this.audits = db.collection(COLLECTIONS.audit)
    this.settings = db.collection<SettingsDocument>(COLLECTIONS.audit)
  }

  async rows(eventNos: readonly number[]): Promise<Map<number, ServedRow>> {
    const found = new Map<number, ServedRow>()
    if (eventNos.length === 0) return found
    for (const document of await documentsOf(this.audits, eventNos, KEPT_ONLY)) found.set(numberIn(document.event_no, Number.NaN), keptIn(document))
    return found
  }

  /** The documents first, then the records: a write that lands between is in the records (see the keeper's `keep`). */
  async read(eventNos: readonly number[]): Promise<KeptRead> {
    const rows = await this.rows(eventNos)
    return { rows, records: await this.reader.of(eventNos) }
  }

  records = (eventNos: readonly number[]): Promise<Map<number, EventRecords>> => this.reader.of(eventNos)

  /** Each a compare-and-set: resolves to the events whose write lost (all of a bulk write that lost any: the keeper reads them again). */
  async write(writes: readonly RowWrite[], now: number): Promise<number[]> {
    if (writes.length === 0) return []
    const operations = writes.map((write) => {
      const rev = ((write.held.rev as number | undefined) ?? 0) + 1
      const change = 'made' in write ? write.made.change : write.change
      const set: Document =
        'made' in write
          ? { event_no: write.event_no, ...factFields(write.made.facts, write.made.report), ...lookFields(write.made.look, now), rev }
          : { ...lookFields(write.look, now), rev }
      if (change !== null) set.change = { rev, value: asStored(change) }
      return { updateOne: { filter: sameRevision(write.event_no, write.held), update: { $set: set }, upsert: !write.held.existed } }
    })
    const all = writes.map((write) => write.event_no)
    try {
      if (operations.length === 1) {
        const { filter, update, upsert } = operations[0]!.updateOne
        const result = await this.audits.updateOne(filter, update, { upsert })
        return result.matchedCount + result.upsertedCount === 1 ? [] : all
      }
      const result = await this.audits.bulkWrite(operations, { ordered: false })
      return result.matchedCount + result.upsertedCount === writes.length ? [] : all
    } catch (error) {
      // An insert that met the document another writer created meanwhile: that writer won the round.
      if (isDuplicateKey(error)) return all
      throw error
    }
  }

  async setAside(eventNo: number): Promise<void> {
    await this.audits.updateOne({ event_no: eventNo }, { $set: { due_at: null } })
  }

  async windowRows(window: TimeWindow, after: EventPosition | undefined, limit: number): Promise<WindowRow[]> {
    const documents = await this.audits
      .find(windowFilter(window, after), { projection: { _id: 0, event_no: 1, event_time: 1, report: 1 }, sort: { event_time: 1, event_no: 1 }, limit })
      .toArray()
    return documents.map((document) => {
      const report = plain(document.report)
      const event_no = numberIn(document.event_no, Number.NaN)
      return isKeptReport(report) ? report : { event_no, event_time: numberIn(document.event_time, Number.NaN), error: `the kept report of event ${event_no} is not a report` }
    })
  }

  lookedAfter(at: number, limit: number): Promise<number[]> {
    return this.eventNumbers({ looked_at: { $gt: at } }, { looked_at: -1 }, limit)
  }

  /** `$ne: null` keeps out the documents with nothing due, which a server's type brackets would too. */
  dueBy(now: number, limit: number): Promise<number[]> {
    return this.eventNumbers({ due_at: { $ne: null, $lte: now } }, { due_at: 1 }, limit)
  }

  /** Every event with a record or a document. */
  auditedAfter = (after: number, limit: number) => this.reader.eventNumbersAfter(after, limit)

  /** The collection's own estimate (its metadata, no scan): documents of events outside the audit count too. */
  async size(): Promise<number> {
    return this.audits.estimatedDocumentCount()
  }

  /** The record collections keep no column made from the records (the output texts are made as they are read). */
  columnsOf = (): [] => []
  columnsIn = (): [] => []

  async rebuildRecord(): Promise<RebuildRecord> {
    const stored = await this.settings.findOne({ _id: AUDIT_SETTINGS_ID }, { projection: { _id: 0, facts_signature: 1, looks_signature: 1, rebuild: 1 } })
    return { facts: stored?.facts_signature, looks: stored?.looks_signature, plan: planOf(stored?.rebuild) }
  }

  async recordRebuild(plan: Plan | null, { facts, looks }: Signatures): Promise<void> {
    const set = plan === null ? { facts_signature: facts, looks_signature: looks, rebuild: null } : { rebuild: markOf(plan) }
    await this.settings.updateOne({ _id: AUDIT_SETTINGS_ID }, { $set: set }, { upsert: true })
  }

  rebuildTotal = () => this.size()

  keptAfter(after: number, limit: number): Promise<number[]> {
    return this.eventNumbers({ event_no: { $gt: after } }, { event_no: 1 }, limit)
  }

  /** No transaction: each row is a compare-and-set, and the plan is recorded once the batch's rows are written. */
  batch = <T>(work: () => Maybe<T>): Maybe<T> => work()

  /** Nothing is marked: the change-stream watcher (audit-watcher.ts) keeps the audit after other programs' writes already. */
  marked = (): { eventNos: number[]; upTo: number } => ({ eventNos: [], upTo: 0 })

  unmark(): void {}

  private async eventNumbers(filter: Filter<Document>, sort: Sort, limit: number): Promise<number[]> {
    const documents = await this.audits.find(filter, { projection: { _id: 0, event_no: 1 }, sort, limit }).toArray()
    return documents.map((document) => numberIn(document.event_no, Number.NaN)).filter((eventNo) => !Number.isNaN(eventNo))
  }
}
