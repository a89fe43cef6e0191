import type { Db } from 'mongodb'
import { eventJson } from '../../domain/output-forms.js'
import type { EventPageQuery, EventRecord, OutputRow } from '../../domain/records.js'
import type { Sites } from '../../vocabulary.js'
import type { Adapter } from '../guarded-store.js'
import type { EventCollection } from '../port.js'
import { toDocument, toEvent } from './event-documents.js'
import { retryOnDuplicateKey } from './driver-errors.js'
import { pageFilter, pageOrder } from './event-pages.js'
import { COLLECTIONS } from './indexes.js'
import { recordReads, type MongoRecordWrites, type RecordReads } from './record-writes.js'

/** Events: bulk upsert, lookup and keyset pages. */
export class MongoEvents implements Adapter<EventCollection> {
  private readonly events: RecordReads

  constructor(
    db: Db,
    private readonly sites: Sites,
    private readonly records: MongoRecordWrites
  ) {
    this.events = recordReads(db, COLLECTIONS.events)
  }

  /** One unordered bulk write of whole-document replacements: idempotent, so safe to run again; then their audits. */
  async upsert(events: readonly EventRecord[]): Promise<number> {
    if (events.length === 0) return 0
    const operations = events.map((event) => ({
      replaceOne: { filter: { event_no: event.event_no }, replacement: toDocument(event), upsert: true }
    }))
    const eventNos = events.map((event) => event.event_no)
    await this.records.write((writer) => retryOnDuplicateKey(() => writer.bulk(COLLECTIONS.events, eventNos, operations)))
    return events.length
  }

  async find(eventNo: number): Promise<EventRecord | null> {
    const document = await this.events.findOne({ event_no: eventNo })
    return document === null ? null : toEvent(document)
  }

  /** event_no is a unique index: a number asked twice still matches one document. */
  async findMany(eventNos: readonly number[]): Promise<EventRecord[]> {
    return (await this.events.find({ event_no: { $in: [...eventNos] } }).toArray()).map(toEvent)
  }

  /** Documents other programs wrote are read here, so their output text is made on read. */
  async page(query: EventPageQuery): Promise<OutputRow[]> {
    const cursor = this.events.find(pageFilter(query), { sort: pageOrder(query.order === 'asc'), limit: query.limit })
    return (await cursor.toArray()).map((document) => {
      const event = toEvent(document)
      return { position: { timestamp: event.timestamp, event_no: event.event_no }, json: eventJson(event, this.sites) }
    })
  }
}
