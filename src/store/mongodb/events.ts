import type { Db, Document, Filter, Sort } from 'mongodb'
import { eventJson } from '../../domain/output-forms.js'
import type { EventPageQuery, EventPosition, EventRecord, OutputRow } from '../../domain/records.js'
import type { TimeWindow } from '../../domain/time-window.js'
import type { Sites } from '../../vocabulary.js'
import type { Adapter } from '../guarded-store.js'
import type { EventCollection } from '../port.js'
import { toEvent } from './documents.js'
import { retryOnDuplicateKey } from './driver-errors.js'
import { COLLECTIONS } from './indexes.js'
import { recordReads, type MongoRecordWrites, type RecordReads } from './record-writes.js'

/**
 * The keyset condition of one page in (timestamp, event_no) order, strictly after `after` (ascending) or before it, up
 * to the window's far bound: a timestamp range plus an $or for ties, so the (…, timestamp, event_no) indexes give a
 * range scan in the order returned. The first page starts at the near bound (start inclusive, end exclusive).
 */
export function keysetFilter(window: TimeWindow, ascending: boolean, after: EventPosition | undefined): Filter<Document> {
  if (after === undefined) return { timestamp: { $gte: new Date(window.start), $lt: new Date(window.end) } }
  const at = new Date(after.timestamp)
  return ascending
    ? { timestamp: { $gte: at, $lt: new Date(window.end) }, $or: [{ timestamp: { $gt: at } }, { event_no: { $gt: after.event_no } }] }
    : { timestamp: { $lte: at, $gte: new Date(window.start) }, $or: [{ timestamp: { $lt: at } }, { event_no: { $lt: after.event_no } }] }
}

function pageFilter(query: EventPageQuery): Filter<Document> {
  const filter: Document = keysetFilter(query.window, query.order === 'asc', query.after)
  const snr: Document = {}
  if (query.minSnr !== undefined) snr.$gte = query.minSnr
  if (query.maxSnr !== undefined) snr.$lte = query.maxSnr
  if (Object.keys(snr).length > 0) filter.snr = snr
  if (query.knownSourceName !== undefined) filter.known_source_name = query.knownSourceName
  if (query.basebandRequested !== undefined) filter.baseband_requested = query.basebandRequested
  return filter
}

export const pageOrder = (ascending: boolean): Sort => (ascending ? { timestamp: 1, event_no: 1 } : { timestamp: -1, event_no: -1 })

export class MongoEvents implements Adapter<EventCollection> {
  private readonly events: RecordReads

  constructor(
    db: Db,
    private readonly sites: Sites,
    private readonly records: MongoRecordWrites
  ) {
    this.events = recordReads(db, COLLECTIONS.events)
  }

  /** Whole-document replacements, idempotent, in one unordered bulk write; the event time as a BSON date (readable, sortable). */
  async upsert(events: readonly EventRecord[]): Promise<number> {
    if (events.length === 0) return 0
    const operations = events.map((event) => ({
      replaceOne: { filter: { event_no: event.event_no }, replacement: { ...event, timestamp: new Date(event.timestamp) }, upsert: true }
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
