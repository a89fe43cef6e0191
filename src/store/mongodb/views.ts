import type { Db } from 'mongodb'
import { callbackHead, callbackJson, traceJson } from '../../domain/output-forms.js'
import type { EventParts, EventPosition, OutputRow, TraceRecord, WindowEventParts } from '../../domain/records.js'
import type { TimeWindow } from '../../domain/time-window.js'
import type { Adapter } from '../guarded-store.js'
import type { StoreViews } from '../port.js'
import type { AuditRecords } from './audit-records.js'
import type { Sites } from '../../vocabulary.js'
import type { MongoDatatrail } from './datatrail.js'
import { numberIn, plainDocument } from './documents.js'
import { keysetFilter, pageOrder } from './event-pages.js'
import { toEvent } from './event-documents.js'
import type { MongoEvents } from './events.js'
import type { MongoHeartbeats } from './heartbeats.js'
import { COLLECTIONS } from './indexes.js'
import { recordReads, type RecordReads } from './record-writes.js'
import { TRACE_ONLY, type MongoTraces } from './traces.js'
import { WindowPages } from './window-page.js'

interface Tables {
  events: MongoEvents
  traces: MongoTraces
  datatrail: MongoDatatrail
  heartbeats: MongoHeartbeats
}

/** Reads across the collections: one event's parts, the baseband-callback scan, and a window's parts. */
export class MongoViews implements Adapter<StoreViews> {
  private readonly events: RecordReads
  private readonly traces: RecordReads
  private readonly windowPages: WindowPages

  constructor(
    db: Db,
    private readonly tables: Tables,
    private readonly sites: Sites,
    records: AuditRecords
  ) {
    this.events = recordReads(db, COLLECTIONS.events)
    this.traces = recordReads(db, COLLECTIONS.trace)
    this.windowPages = new WindowPages(db, records)
  }

  /** Four indexed lookups at once; not one snapshot as on SQLite: the parts are independent documents. */
  async eventParts(eventNo: number, { heartbeatLimit }: { heartbeatLimit?: number } = {}): Promise<EventParts> {
    const { events, traces, datatrail, heartbeats } = this.tables
    const [event, trace, members, beats] = await Promise.all([
      events.find(eventNo),
      traces.find(eventNo),
      datatrail.of(eventNo),
      heartbeats.page(eventNo, null, heartbeatLimit ?? Number.MAX_SAFE_INTEGER)
    ])
    return { event, trace, datatrail: members, heartbeats: beats.heartbeats, heartbeatTotal: beats.total, heartbeatsUpdated: beats.latestUpdate }
  }

  /**
   * One page of requested events, then their traces in one $in query, joined here. The output texts
   * are made on read: other programs write these documents.
   */
  async callbackPage(window: TimeWindow, after: EventPosition | undefined, limit: number): Promise<OutputRow[]> {
    const filter = { baseband_requested: true, ...keysetFilter(window, true, after) }
    const projection = { _id: 0, event_no: 1, timestamp: 1, snr: 1, known_source_name: 1 }
    const events = (await this.events.find(filter, { sort: pageOrder(true), limit, projection }).toArray()).map(toEvent)
    if (events.length === 0) return []
    const traces = await this.traces.find({ event_no: { $in: events.map((event) => event.event_no) } }, TRACE_ONLY).toArray()
    const traceOf = new Map<number, TraceRecord>()
    for (const trace of traces.map(plainDocument)) traceOf.set(numberIn(trace.event_no, -1), trace)
    return events.map((event) => {
      const trace = traceOf.get(event.event_no)
      const traceText = trace === undefined ? null : traceJson(event.event_no, trace, this.sites)
      return { position: { timestamp: event.timestamp, event_no: event.event_no }, json: callbackJson(callbackHead(event), traceText) }
    })
  }

  windowPage(window: TimeWindow, after: EventPosition | undefined, limit: number): Promise<WindowEventParts[]> {
    return this.windowPages.page(window, after, limit)
  }
}
