import type { Collection, Db, Document } from 'mongodb'
import type { TimeWindow } from '../../domain/time-window.js'
import type { StoredTrace } from '../../domain/trace.js'
import type { CallbackRow, EventListQuery, EventPosition, StoredEvent } from '../port.js'
import { millisIn, numberIn, plain, plainDocument, WITHOUT_ID } from './documents.js'
import { retryOnDuplicateKey } from './errors.js'
import { keysetFilter, listFilter, pageOrder } from './event-pages.js'
import { COLLECTIONS } from './indexes.js'

/** An event document: the port's fields, with the event time as a BSON date (readable, sortable). */
const toDocument = (event: StoredEvent) => ({ ...event, timestamp: new Date(event.timestamp) })

/** Tolerant of documents other programs wrote: a missing field reads as its empty value. */
export const toEvent = (document: Document): StoredEvent => ({
  event_no: numberIn(document.event_no, 0),
  timestamp: millisIn(document.timestamp, 0),
  snr: numberIn(document.snr, 0),
  dm: document.dm === null || document.dm === undefined ? null : numberIn(document.dm, 0),
  known_source_name: typeof document.known_source_name === 'string' ? document.known_source_name : '',
  tsar_classification: typeof document.tsar_classification === 'string' ? document.tsar_classification : null,
  actions: (plain(document.actions) ?? { want: {}, got: {} }) as StoredEvent['actions'],
  baseband_requested: document.baseband_requested === true,
  update_timestamp: numberIn(document.update_timestamp, 0)
})

/** Events: bulk upsert, lookup, keyset pages and the baseband-callback scan with its traces. */
export class MongoEvents {
  private readonly events: Collection
  private readonly traces: Collection

  constructor(db: Db) {
    this.events = db.collection(COLLECTIONS.events)
    this.traces = db.collection(COLLECTIONS.trace)
  }

  /** One unordered bulk write of whole-document replacements: idempotent, so safe to run again. */
  async upsert(events: StoredEvent[]): Promise<number> {
    if (events.length === 0) return 0
    const operations = events.map((event) => ({
      replaceOne: { filter: { event_no: event.event_no }, replacement: toDocument(event), upsert: true }
    }))
    await retryOnDuplicateKey(() => this.events.bulkWrite(operations, { ordered: false }))
    return events.length
  }

  async find(eventNo: number): Promise<StoredEvent | null> {
    const document = await this.events.findOne({ event_no: eventNo })
    return document === null ? null : toEvent(document)
  }

  async list(query: EventListQuery): Promise<StoredEvent[]> {
    const cursor = this.events.find(listFilter(query), { sort: pageOrder(query.order === 'asc'), limit: query.limit })
    return (await cursor.toArray()).map(toEvent)
  }

  /** One page of requested events, then their traces in one $in query, joined here. */
  async callbackPage(window: TimeWindow, after: EventPosition | undefined, limit: number): Promise<CallbackRow[]> {
    const filter = { baseband_requested: true, ...keysetFilter(window, true, after) }
    const projection = { _id: 0, event_no: 1, timestamp: 1, snr: 1, known_source_name: 1 }
    const events = (await this.events.find(filter, { sort: pageOrder(true), limit, projection }).toArray()).map(toEvent)
    if (events.length === 0) return []
    const traces = await this.traces.find({ event_no: { $in: events.map((event) => event.event_no) } }, WITHOUT_ID).toArray()
    const traceOf = new Map<number, StoredTrace>()
    for (const trace of traces.map(plainDocument)) traceOf.set(numberIn(trace.event_no, -1), trace)
    return events.map((event) => ({ event, trace: traceOf.get(event.event_no) ?? null }))
  }
}
