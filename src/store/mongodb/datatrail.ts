import type { Db } from 'mongodb'
import type { DatatrailRecord } from '../../domain/records.js'
import type { Adapter } from '../guarded-store.js'
import type { DatatrailCollection } from '../port.js'
import { numberIn, plainDocument, WITHOUT_ID } from './documents.js'
import { retryOnDuplicateKey } from './driver-errors.js'
import { COLLECTIONS } from './indexes.js'
import { recordReads, type MongoRecordWrites, type RecordReads } from './record-writes.js'

/** Datatrail members: `{event_no, member, value, update_timestamp}`, one document per member. */
export class MongoDatatrail implements Adapter<DatatrailCollection> {
  private readonly datatrail: RecordReads

  constructor(
    db: Db,
    private readonly records: MongoRecordWrites
  ) {
    this.datatrail = recordReads(db, COLLECTIONS.datatrail)
  }

  async put(members: readonly DatatrailRecord[]): Promise<void> {
    if (members.length === 0) return
    const operations = members.map(({ event_no, member, value, update_timestamp }) => ({
      replaceOne: { filter: { event_no, member }, replacement: { event_no, member, value, update_timestamp }, upsert: true }
    }))
    const eventNos = members.map((member) => member.event_no)
    await this.records.write((writer) => retryOnDuplicateKey(() => writer.bulk(COLLECTIONS.datatrail, eventNos, operations)))
  }

  async of(eventNo: number): Promise<DatatrailRecord[]> {
    const documents = await this.datatrail.find({ event_no: eventNo }, { ...WITHOUT_ID, sort: { member: 1 } }).toArray()
    // A missing value reads as an empty one.
    return documents.map(plainDocument).map(({ event_no, member, value, update_timestamp }) => ({
      event_no: numberIn(event_no, 0),
      member: String(member),
      value: (value ?? {}) as Record<string, unknown>,
      update_timestamp: numberIn(update_timestamp, 0)
    }))
  }
}
