import { MongoBulkWriteError, type Db, type Document } from 'mongodb'
import type { HeartbeatInput } from '../../../schemas/heartbeats.js'
import type { HeartbeatRecord } from '../../domain/records.js'
import type { Adapter } from '../guarded-store.js'
import type { HeartbeatCollection, HeartbeatPage } from '../port.js'
import { numberIn, plainDocument, WITHOUT_ID } from './documents.js'
import { isDuplicateKey } from './driver-errors.js'
import { COLLECTIONS } from './indexes.js'
import { recordReads, type MongoRecordWrites, type RecordReads, type RecordWriter } from './record-writes.js'

/** A heartbeat document read back (with WITHOUT_ID): its own fields, and when it was stored. */
export const toHeartbeatRecord = (stored: Document): HeartbeatRecord => {
  const { update_timestamp, ...heartbeat } = plainDocument(stored)
  return { heartbeat: heartbeat as HeartbeatInput, update_timestamp: numberIn(update_timestamp, 0) }
}

/** Heartbeats: the record's own fields plus update_timestamp, one document per heartbeat_id. */
export class MongoHeartbeats implements Adapter<HeartbeatCollection> {
  private readonly heartbeats: RecordReads

  constructor(
    db: Db,
    private readonly records: MongoRecordWrites
  ) {
    this.heartbeats = recordReads(db, COLLECTIONS.heartbeats)
  }

  /**
   * Insert-if-absent by heartbeat_id: an upsert that only has $setOnInsert, so a stored id is left
   * as it is. When another writer inserts the same id at the same moment, its E11000 means exactly
   * that ("already stored"); the operations that did insert are still counted. Then the audits of
   * their events, all of them: one stored already may be another writer's whose recompute is still to come.
   */
  async add(heartbeats: readonly HeartbeatInput[], now: number): Promise<number> {
    if (heartbeats.length === 0) return 0
    return this.records.write((writer) => this.insert(writer, heartbeats, now))
  }

  private async insert(writer: RecordWriter, heartbeats: readonly HeartbeatInput[], now: number): Promise<number> {
    const eventNos = heartbeats.map((heartbeat) => heartbeat.event_no)
    const operations = heartbeats.map((heartbeat) => ({
      updateOne: {
        filter: { heartbeat_id: heartbeat.heartbeat_id },
        update: { $setOnInsert: { ...heartbeat, update_timestamp: now } },
        upsert: true
      }
    }))
    try {
      return (await writer.bulk(COLLECTIONS.heartbeats, eventNos, operations)).upsertedCount
    } catch (error) {
      if (error instanceof MongoBulkWriteError && isDuplicateKey(error)) return error.upsertedCount
      throw error
    }
  }

  async page(eventNo: number, afterId: number | null, limit: number): Promise<HeartbeatPage> {
    const after = afterId === null ? {} : { heartbeat_id: { $gt: afterId } }
    const [documents, total, [latest]] = await Promise.all([
      this.heartbeats.find({ event_no: eventNo, ...after }, { ...WITHOUT_ID, sort: { heartbeat_id: 1 }, limit }).toArray(),
      this.heartbeats.countDocuments({ event_no: eventNo }),
      this.heartbeats.find({ event_no: eventNo }, { projection: { _id: 0, update_timestamp: 1 }, sort: { update_timestamp: -1 }, limit: 1 }).toArray()
    ])
    return { heartbeats: documents.map(toHeartbeatRecord), total, latestUpdate: numberIn(latest?.update_timestamp, 0) }
  }
}
