import { MongoBulkWriteError, type Db } from 'mongodb'
import type { HeartbeatInput } from '../../../schemas/heartbeats.js'
import type { HeartbeatRecord } from '../../domain/records.js'
import type { Adapter } from '../guarded-store.js'
import type { HeartbeatCollection, HeartbeatPage } from '../port.js'
import { numberIn, plainDocument, WITHOUT_ID } from './documents.js'
import { isDuplicateKey } from './driver-errors.js'
import { COLLECTIONS } from './indexes.js'
import { recordReads, type MongoRecordWrites, type RecordReads } from './record-writes.js'

/** One document per heartbeat_id: the record's own fields and update_timestamp. */
export class MongoHeartbeats implements Adapter<HeartbeatCollection> {
  private readonly heartbeats: RecordReads

  constructor(
    db: Db,
    private readonly records: MongoRecordWrites
  ) {
    this.heartbeats = recordReads(db, COLLECTIONS.heartbeats)
  }

  /**
   * Insert-if-absent by heartbeat_id (an upsert of $setOnInsert only); another writer's E11000 on the id means "already
   * stored", still counted. Every event's audit is kept: a heartbeat stored already may await its writer's recompute.
   */
  async add(heartbeats: readonly HeartbeatInput[], now: number): Promise<number> {
    if (heartbeats.length === 0) return 0
    const eventNos = heartbeats.map((heartbeat) => heartbeat.event_no)
    const operations = heartbeats.map((heartbeat) => ({
      updateOne: { filter: { heartbeat_id: heartbeat.heartbeat_id }, update: { $setOnInsert: { ...heartbeat, update_timestamp: now } }, upsert: true }
    }))
    return this.records.write(async (writer) => {
      try {
        return (await writer.bulk(COLLECTIONS.heartbeats, eventNos, operations)).upsertedCount
      } catch (error) {
        if (error instanceof MongoBulkWriteError && isDuplicateKey(error)) return error.upsertedCount
        throw error
      }
    })
  }

  async page(eventNo: number, afterId: number | null, limit: number): Promise<HeartbeatPage> {
    const after = afterId === null ? {} : { heartbeat_id: { $gt: afterId } }
    const [documents, total, [latest]] = await Promise.all([
      this.heartbeats.find({ event_no: eventNo, ...after }, { ...WITHOUT_ID, sort: { heartbeat_id: 1 }, limit }).toArray(),
      this.heartbeats.countDocuments({ event_no: eventNo }),
      this.heartbeats.find({ event_no: eventNo }, { projection: { _id: 0, update_timestamp: 1 }, sort: { update_timestamp: -1 }, limit: 1 }).toArray()
    ])
    const records = documents.map(plainDocument).map(({ update_timestamp, ...heartbeat }): HeartbeatRecord => {
      return { heartbeat: heartbeat as HeartbeatInput, update_timestamp: numberIn(update_timestamp, 0) }
    })
    return { heartbeats: records, total, latestUpdate: numberIn(latest?.update_timestamp, 0) }
  }
}
