import type { AnyBulkWriteOperation, BulkWriteResult, Collection, Db, Document, Filter, UpdateResult } from 'mongodb'
import { SUMMARY_FIELD, summaryOf } from './history-summary.js'
import { COLLECTIONS } from './indexes.js'
import { HISTORY_FIELD } from './transitions.js'

/** The collections of records, which an event's facts are made from (audit-records.ts). */
export const RECORD_COLLECTIONS = [COLLECTIONS.events, COLLECTIONS.trace, COLLECTIONS.datatrail, COLLECTIONS.heartbeats] as const
export type RecordCollection = (typeof RECORD_COLLECTIONS)[number]

/** What a write of records needs of the kept audit's keeper (src/kept-audit/keeper.ts): to be told which events it touched, once it landed. */
export interface KeepAudits {
  keep(eventNos: Iterable<number>): Promise<void>
}

/** What the adapter may do with a record collection outside this file: read it, and follow its changes. */
export type RecordReads = Pick<Collection, 'find' | 'findOne' | 'countDocuments' | 'watch'>

/** A record collection to read, typed so that nothing can be written through it: writes go through MongoRecordWrites. */
export const recordReads = (db: Db, name: RecordCollection): RecordReads => db.collection(name)

/** The writes of record documents one `MongoRecordWrites.write` makes; each names the events it touches. */
export interface RecordWriter {
  /** One unordered bulk write of documents of the events `eventNos`. */
  bulk(name: RecordCollection, eventNos: Iterable<number>, operations: AnyBulkWriteOperation[]): Promise<BulkWriteResult>
  /** One single-document update of a document of event `eventNo`. */
  update(name: RecordCollection, eventNo: number, filter: Filter<Document>, update: Document, options?: { upsert?: boolean }): Promise<UpdateResult>
}

/**
 * The one way the MongoDB adapter writes a record collection (events, trace, datatrail, heartbeats),
 * as RecordWrites is on SQLite. It alone holds those collections as more than RecordReads (beside
 * HistorySummaryWrites below, which writes no record but what is derived from one); a writer
 * writes through the RecordWriter that `write` lends it, naming the events each write touches, and
 * once its work is done `write` keeps the audits of those events (`Keeper.keep`). So no record
 * reaches the database without its event's audit kept after it, and no writer has to remember to
 * (test/store/mongodb-record-writes.ts holds every file of the adapter to it). Unlike SQLite there
 * is no transaction: the keep follows the write, and a write another program makes is the
 * watcher's and the verifier's to keep (audit-watcher.ts).
 */
export class MongoRecordWrites {
  private readonly collections: Record<RecordCollection, Collection>

  constructor(
    db: Db,
    private readonly audits: KeepAudits
  ) {
    this.collections = Object.fromEntries(RECORD_COLLECTIONS.map((name) => [name, db.collection(name)])) as Record<RecordCollection, Collection>
  }

  /**
   * Runs `work` with a writer, then keeps the audit of every event it wrote, those whose write
   * failed in a way the work caught included (a heartbeat met already stored). A work that throws
   * keeps nothing, as before this wrapper: what landed of it is left to the watcher and the verifier.
   * The writer refuses to write once its work has ended.
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

/**
 * The writes of a trace's history summary (history-summary.ts) made apart from a push: no record
 * changes, only what is derived from one, so no audit is kept after them (they are made while one
 * is, or before one).
 */
export class HistorySummaryWrites {
  private readonly traces: Collection

  constructor(db: Db) {
    this.traces = db.collection(COLLECTIONS.trace)
  }

  /**
   * The summary of event `eventNo`'s history made again from the document as `read` (its whole
   * history and its summary), unless either has changed since: a push in between moved the
   * summary or the history's length, and the next read sees it.
   */
  async repair(eventNo: number, read: Document): Promise<void> {
    const history: unknown = read[HISTORY_FIELD]
    const length = Array.isArray(history) ? history.length : 0
    const filter: Filter<Document> = { event_no: eventNo, [SUMMARY_FIELD]: { $eq: (read[SUMMARY_FIELD] as unknown) ?? null } }
    if (length > 0) filter[HISTORY_FIELD] = { $size: length }
    await this.traces.updateOne(filter, { $set: { [SUMMARY_FIELD]: summaryOf(history) } })
  }

  /** Marks the summaries of these trace documents (by `_id`) out of step: another program changed their history. */
  async forget(ids: readonly unknown[]): Promise<void> {
    if (ids.length === 0) return
    const operations = ids.map((id) => ({ updateOne: { filter: { _id: id as never }, update: { $set: { [SUMMARY_FIELD]: null } } } }))
    await this.traces.bulkWrite(operations, { ordered: false })
  }
}
