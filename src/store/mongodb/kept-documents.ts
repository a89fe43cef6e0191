import type { Collection, Db, Document, Filter } from 'mongodb'
import type { EventRecords } from '../../domain/audit/kept-facts.js'
import type { EventPosition } from '../../domain/records.js'
import type { TimeWindow } from '../../domain/time-window.js'
import { isKeptReport } from '../../kept-audit/kept-check.js'
import { readPlan, type Plan, type RebuildRecord, type RebuildStorage, type Signatures } from '../../kept-audit/rebuild.js'
import type { Held, KeptRead, Maybe, RowWrite, ServedRow, WindowRow } from '../../kept-audit/storage.js'
import { asStored, AUDIT_SETTINGS_ID, factFields, KEPT_ONLY, keptIn, lookFields } from './audit-documents.js'
import type { AuditRecords } from './audit-records.js'
import { isDuplicateKey } from './driver-errors.js'
import { numberIn, plain } from './documents.js'
import { COLLECTIONS } from './indexes.js'

/**
 * The keyset condition of one window page in (event_time, event_no) order, as keysetFilter (event-pages.ts)
 * writes it for events: a time range plus an $or for ties, so that the {listed, event_time, event_no}
 * index gives a range scan in the order returned.
 */
function windowFilter(window: TimeWindow, after: EventPosition | undefined): Filter<Document> {
  if (after === undefined) return { listed: true, event_time: { $gte: window.start, $lt: window.end } }
  return {
    listed: true,
    event_time: { $gte: after.timestamp, $lt: window.end },
    $or: [{ event_time: { $gt: after.timestamp } }, { event_no: { $gt: after.event_no } }]
  }
}

/** The condition a write holds the document to: the revision read, or no document (nor revision) yet. */
const sameRevision = (eventNo: number, { rev }: Held) => ({ event_no: eventNo, rev: rev === undefined ? { $exists: false } : { $eq: rev } })

const numbers = (documents: Document[]) => documents.map((document) => numberIn(document.event_no, Number.NaN)).filter((eventNo) => !Number.isNaN(eventNo))

/**
 * A rebuild under way as the settings document holds it (`rebuild`): the plan (rebuild.ts) in the
 * words an earlier release wrote it in, so that a rebuild it left is gone on with.
 */
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

const markOf = ({ facts, looks, what, after, done, total, first }: Plan): RebuildMark => ({
  facts_signature: facts,
  looks_signature: looks,
  from: what === 'facts' ? 'records' : 'facts',
  after,
  done,
  total,
  first
})

/**
 * The kept audit's documents on MongoDB (audit-documents.ts): one per event with a record, in the
 * audit or not, in the `audit` collection. Reads are one document or one index range; every write
 * is a compare-and-set on the document's `rev`, with the verdict change in the same update, so
 * several instances and the change-stream watcher write without a transaction.
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
    const documents =
      eventNos.length === 1
        ? [await this.audits.findOne({ event_no: eventNos[0] }, KEPT_ONLY)].filter((document) => document !== null)
        : await this.audits.find({ event_no: { $in: [...eventNos] } }, KEPT_ONLY).toArray()
    for (const document of documents) found.set(numberIn(document.event_no, Number.NaN), { existed: true, ...keptIn(document) })
    return found
  }

  /** The documents first, then the records: a write that lands between is in the records (see the keeper's `keep`). */
  async read(eventNos: readonly number[]): Promise<KeptRead> {
    const rows = await this.rows(eventNos)
    return { rows, records: await this.reader.of(eventNos) }
  }

  async records(eventNos: readonly number[]): Promise<Map<number, EventRecords>> {
    return this.reader.of(eventNos)
  }

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
      const entry = isKeptReport(report) ? report : { error: `the kept report of event ${event_no} is not a report` }
      return { event_no, event_time: numberIn(document.event_time, Number.NaN), entry }
    })
  }

  async lookedAfter(at: number, limit: number): Promise<number[]> {
    return numbers(await this.audits.find({ looked_at: { $gt: at } }, { projection: { _id: 0, event_no: 1 }, sort: { looked_at: -1 }, limit }).toArray())
  }

  /** `$ne: null` keeps out the documents with nothing due, which a server's type brackets would too. */
  async dueBy(now: number, limit: number): Promise<number[]> {
    return numbers(await this.audits.find({ due_at: { $ne: null, $lte: now } }, { projection: { _id: 0, event_no: 1 }, sort: { due_at: 1 }, limit }).toArray())
  }

  /** Every event with a record or a document. */
  async auditedAfter(after: number, limit: number): Promise<number[]> {
    return this.reader.eventNumbersAfter(after, limit)
  }

  /** The collection's own estimate (its metadata, no scan): documents of events outside the audit count too. */
  async size(): Promise<number> {
    return this.audits.estimatedDocumentCount()
  }

  /** The record collections keep no column made from the records (the output texts are made as they are read). */
  columnsOf(): [] {
    return []
  }

  columnsIn(): [] {
    return []
  }

  /** The settings document (`_id: 'settings'`, the one document of the collection that is no event's). */
  async rebuildRecord(): Promise<RebuildRecord> {
    const stored = await this.settings.findOne({ _id: AUDIT_SETTINGS_ID }, { projection: { _id: 0, facts_signature: 1, looks_signature: 1, rebuild: 1 } })
    return { facts: stored?.facts_signature, looks: stored?.looks_signature, plan: planOf(stored?.rebuild) }
  }

  async recordRebuild(plan: Plan | null, { facts, looks }: Signatures): Promise<void> {
    const set = plan === null ? { facts_signature: facts, looks_signature: looks, rebuild: null } : { rebuild: markOf(plan) }
    await this.settings.updateOne({ _id: AUDIT_SETTINGS_ID }, { $set: set }, { upsert: true })
  }

  async rebuildTotal(): Promise<number> {
    return this.size()
  }

  async keptAfter(after: number, limit: number): Promise<number[]> {
    return numbers(await this.audits.find({ event_no: { $gt: after } }, { projection: { _id: 0, event_no: 1 }, sort: { event_no: 1 }, limit }).toArray())
  }

  /** No transaction: each row is a compare-and-set, and the plan is recorded once the batch's rows are written. */
  batch<T>(work: () => Maybe<T>): Maybe<T> {
    return work()
  }

  /** Nothing is marked: the change-stream watcher (audit-watcher.ts) keeps the audit after other programs' writes already. */
  marked(): { eventNos: number[]; upTo: number } {
    return { eventNos: [], upTo: 0 }
  }

  unmark(): void {}
}
