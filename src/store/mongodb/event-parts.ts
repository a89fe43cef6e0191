import { MongoBulkWriteError, type Collection, type Db } from 'mongodb'
import type { HeartbeatInput } from '../../../schemas/heartbeats.js'
import type { StoredDatatrail, StoredHeartbeat } from '../port.js'
import { numberIn, plainDocument, WITHOUT_ID } from './documents.js'
import { isDuplicateKey, retryOnDuplicateKey } from './errors.js'
import { COLLECTIONS } from './indexes.js'

/**
 * Datatrail members (`{event_no, member, value, update_timestamp}`, one per member) and heartbeats
 * (the record's own fields plus update_timestamp, one per heartbeat_id).
 */
export class MongoEventParts {
  private readonly datatrail: Collection
  private readonly heartbeats: Collection

  constructor(db: Db) {
    this.datatrail = db.collection(COLLECTIONS.datatrail)
    this.heartbeats = db.collection(COLLECTIONS.heartbeats)
  }

  async putDatatrail(items: StoredDatatrail[]): Promise<void> {
    if (items.length === 0) return
    const operations = items.map(({ event_no, member, value, update_timestamp }) => ({
      replaceOne: { filter: { event_no, member }, replacement: { event_no, member, value, update_timestamp }, upsert: true }
    }))
    await retryOnDuplicateKey(() => this.datatrail.bulkWrite(operations, { ordered: false }))
  }

  async datatrailOf(eventNo: number): Promise<StoredDatatrail[]> {
    const documents = await this.datatrail.find({ event_no: eventNo }, { ...WITHOUT_ID, sort: { member: 1 } }).toArray()
    return documents.map(plainDocument).map((document) => ({
      event_no: eventNo,
      member: String(document.member),
      value: (document.value ?? {}) as Record<string, unknown>,
      update_timestamp: numberIn(document.update_timestamp, 0)
    }))
  }

  /**
   * Insert-if-absent by heartbeat_id: an upsert that only has $setOnInsert, so a stored id is left
   * as it is. When another writer inserts the same id at the same moment, its E11000 means exactly
   * that ("already stored"); the operations that did insert are still counted.
   */
  async addHeartbeats(heartbeats: HeartbeatInput[], now: number): Promise<number> {
    if (heartbeats.length === 0) return 0
    const operations = heartbeats.map((heartbeat) => ({
      updateOne: {
        filter: { heartbeat_id: heartbeat.heartbeat_id },
        update: { $setOnInsert: { ...heartbeat, update_timestamp: now } },
        upsert: true
      }
    }))
    try {
      return (await this.heartbeats.bulkWrite(operations, { ordered: false })).upsertedCount
    } catch (error) {
      if (error instanceof MongoBulkWriteError && isDuplicateKey(error)) return error.upsertedCount
      throw error
    }
  }

  async heartbeatsOf(eventNo: number): Promise<StoredHeartbeat[]> {
    const documents = await this.heartbeats.find({ event_no: eventNo }, { ...WITHOUT_ID, sort: { heartbeat_id: 1 } }).toArray()
    return documents.map(plainDocument).map(({ update_timestamp, ...record }) => ({
      record: record as HeartbeatInput,
      update_timestamp: numberIn(update_timestamp, 0)
    }))
  }
}
