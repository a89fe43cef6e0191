import type { AnyBulkWriteOperation, BulkWriteResult, Collection, Db, Document, Filter, UpdateResult } from 'mongodb'
import { HISTORY_FIELD, SUMMARY_FIELD, summaryOf } from './history-summary.js'
import { COLLECTIONS } from './indexes.js'

export const RECORD_COLLECTIONS = [COLLECTIONS.events, COLLECTIONS.trace, COLLECTIONS.datatrail, COLLECTIONS.heartbeats] as const
type RecordCollection = (typeof RECORD_COLLECTIONS)[number]

export type RecordReads = Pick<Collection, 'find' | 'findOne' | 'countDocuments' | 'watch'>

/** A record collection to read, typed so that nothing can be written through it: writes go through MongoRecordWrites. */
export const recordReads = (db: Db, name: RecordCollection): RecordReads => db.collection(name)

/** The writes one `MongoRecordWrites.write` lends: an unordered bulk write and a single-document update, each naming the events it touches. */
export interface RecordWriter {
  bulk(name: RecordCollection, eventNos: Iterable<number>, operations: AnyBulkWriteOperation[]): Promise<BulkWriteResult>
  update(name: RecordCollection, eventNo: number, filter: Filter<Document>, update: Document, options?: { upsert?: boolean }): Promise<UpdateResult>
}

/**
 * The one way the adapter writes a record collection, as RecordWrites is on SQLite: once a work's writes are done,
 * the audits of the events they named are kept (`Keeper.keep`), so no writer must remember to
 * (test/store/mongodb-record-writes.ts holds every file to it). No transaction: the keep follows the write, and
 * another program's write is the watcher's and the verifier's to keep (audit-watcher.ts).
 */
export class MongoRecordWrites {
  private readonly collections: Record<RecordCollection, Collection>

  constructor(
    db: Db,
    private readonly audits: { keep(eventNos: Iterable<number>): Promise<void> }
  ) {
    this.collections = Object.fromEntries(RECORD_COLLECTIONS.map((name) => [name, db.collection(name)])) as Record<RecordCollection, Collection>
  }

  /**
   * Runs `work` with a writer, then keeps the audit of every event it wrote, a write whose failure it caught included
   * (a heartbeat already stored). A work that throws keeps nothing: what landed is left to the watcher and the
   * verifier. The writer refuses to write once its work has ended.
   */
  async write<T>(work: (writer: RecordWriter) => Promise<T>): Promise<T> {
    const touched = new Set<number>()
    let open = true
    const collections = this.collections
    const writing = (eventNos: Iterable<number>) => {
      if (!open) throw new Error('A record is written only inside MongoRecordWrites.write, which keeps its audit')
      for (const eventNo of eventNos) touched.add(eventNo)
    }
    const writer: RecordWriter = {
      async bulk(name, eventNos, operations) {
        writing(eventNos)
        return collections[name].bulkWrite(operations, { ordered: false })
      },
      async update(name, eventNo, filter, update, options = {}) {
        writing([eventNo])
        return collections[name].updateOne(filter, update, options)
      }
    }
    let result: T
    try {
      result = await work(writer)
    } finally {
      open = false
    }
    await this.audits.keep(touched)
    return result
  }
}

/** The writes of a history's summary apart from a push: they change no record, so no audit is kept after them. */
export class HistorySummaryWrites {
  private readonly traces: Collection

  constructor(db: Db) {
    this.traces = db.collection(COLLECTIONS.trace)
  }

  /** The summary made again from the document as `read` (whole history and summary), unless a push has moved either since. */
  async repair(eventNo: number, read: Document): Promise<void> {
    const history: unknown = read[HISTORY_FIELD]
    const length = Array.isArray(history) ? history.length : 0
    const filter: Filter<Document> = { event_no: eventNo, [SUMMARY_FIELD]: { $eq: (read[SUMMARY_FIELD] as unknown) ?? null } }
    if (length > 0) filter[HISTORY_FIELD] = { $size: length }
    await this.traces.updateOne(filter, { $set: { [SUMMARY_FIELD]: summaryOf(history) } })
  }

  /** Marks these traces' summaries (by `_id`) out of step: another program changed their history. */
  async forget(ids: readonly unknown[]): Promise<void> {
    if (ids.length === 0) return
    const operations = ids.map((id) => ({ updateOne: { filter: { _id: id as never }, update: { $set: { [SUMMARY_FIELD]: null } } } }))
    await this.traces.bulkWrite(operations, { ordered: false })
  }
}
