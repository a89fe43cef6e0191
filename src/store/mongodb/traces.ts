import type { Collection, Db } from 'mongodb'
import type { TraceRecord } from '../../domain/records.js'
import { newTraceDocument } from '../../domain/trace.js'
import type { Sites, StageStatus } from '../../vocabulary.js'
import type { Adapter } from '../guarded-store.js'
import type { TraceCollection } from '../port.js'
import { plainDocument, WITHOUT_ID } from './documents.js'
import { retryOnDuplicateKey } from './driver-errors.js'
import { COLLECTIONS } from './indexes.js'

/**
 * Traces: one document per event with the flat slash keys the pipeline writes
 * (`stages/tsar_classification`, `stages/{stage}/sites/{site}`), plus event_no, create_timestamp
 * and update_timestamp in seconds. Every write is one single-document operation, atomic on the
 * server, so writes of different keys by any number of instances or pipeline processes never lose
 * one another.
 */
export class MongoTraces implements Adapter<TraceCollection> {
  private readonly traces: Collection
  /** A new trace of the configured sites, every key `incomplete`, times to be filled in. */
  private readonly template: TraceRecord

  constructor(db: Db, sites: Sites) {
    this.traces = db.collection(COLLECTIONS.trace)
    const { event_no: _eventNo, create_timestamp: _created, update_timestamp: _updated, ...keys } = newTraceDocument(sites, 0, 0)
    this.template = keys
  }

  /** Inserts the new document unless one exists; an existing one is not touched at all. */
  create(eventNo: number, now: number): Promise<void> {
    const document = { event_no: eventNo, ...this.template, create_timestamp: now, update_timestamp: now }
    return retryOnDuplicateKey(async () => {
      await this.traces.updateOne({ event_no: eventNo }, { $setOnInsert: document }, { upsert: true })
    })
  }

  /**
   * Sets one key and update_timestamp; when the document is new, $setOnInsert adds the rest of
   * the new document. A path may not appear in both operators, so `key` leaves the insert part.
   */
  setStatus(eventNo: number, key: string, status: StageStatus, now: number): Promise<void> {
    const { [key]: _set, ...otherKeys } = this.template
    const update = {
      $set: { [key]: status, update_timestamp: now },
      $setOnInsert: { event_no: eventNo, ...otherKeys, create_timestamp: now }
    }
    return retryOnDuplicateKey(async () => {
      await this.traces.updateOne({ event_no: eventNo }, update, { upsert: true })
    })
  }

  async find(eventNo: number): Promise<TraceRecord | null> {
    const document = await this.traces.findOne({ event_no: eventNo }, WITHOUT_ID)
    return document === null ? null : plainDocument(document)
  }

  /** Whole-document replacements in one unordered bulk write; an `_id` in the input is not kept. */
  async upsert(traces: readonly TraceRecord[]): Promise<number> {
    if (traces.length === 0) return 0
    const operations = traces.map(({ _id, ...trace }) => ({
      replaceOne: { filter: { event_no: trace.event_no }, replacement: trace, upsert: true }
    }))
    await retryOnDuplicateKey(() => this.traces.bulkWrite(operations, { ordered: false }))
    return traces.length
  }
}
