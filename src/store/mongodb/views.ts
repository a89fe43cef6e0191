import type { Db } from 'mongodb'
import { callbackHead, callbackJson, traceJson } from '../../domain/output-forms.js'
import type { EventParts, EventPosition, OutputRow, TraceRecord, WindowEventParts } from '../../domain/records.js'
import type { TimeWindow } from '../../domain/time-window.js'
import type { Adapter } from '../guarded-store.js'
import type { StoreViews } from '../port.js'
import type { AuditRecords } from './audit-records.js'
import type { Sites } from '../../vocabulary.js'
import type { MongoDatatrail } from './datatrail.js'
import { numberIn, plainDocument, toEvent, WITHOUT_ID } from './documents.js'
import { keysetFilter, pageOrder, type MongoEvents } from './events.js'
import type { MongoHeartbeats } from './heartbeats.js'
import { COLLECTIONS } from './indexes.js'
import { recordReads, type RecordReads } from './record-writes.js'
import { TRACE_ONLY, type MongoTraces } from './traces.js'

/** Reads across the collections; not one snapshot as on SQLite: the parts are independent documents, each read as it stands. */
export class MongoViews implements Adapter<StoreViews> {
  private readonly events: RecordReads
  private readonly traces: RecordReads

  constructor(
    db: Db,
    private readonly tables: { events: MongoEvents; traces: MongoTraces; datatrail: MongoDatatrail; heartbeats: MongoHeartbeats },
    private readonly sites: Sites,
    private readonly records: AuditRecords
  ) {
    this.events = recordReads(db, COLLECTIONS.events)
    this.traces = recordReads(db, COLLECTIONS.trace)
  }

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

  /** A page of requested events, then their traces in one $in query; the output texts are made on read, as other programs write these. */
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

  /**
   * Stage latency's and the command-line audit's window: a page of requested events, then what their facts are made
   * from, read as the kept audit reads it (audit-records.ts), bounded: never a whole history, nor every heartbeat.
   */
  async windowPage(window: TimeWindow, after: EventPosition | undefined, limit: number): Promise<WindowEventParts[]> {
    const filter = { baseband_requested: true, ...keysetFilter(window, true, after) }
    const events = (await this.events.find(filter, { ...WITHOUT_ID, sort: pageOrder(true), limit }).toArray()).map(toEvent)
    if (events.length === 0) return []
    const read = await this.records.of(events.map((event) => event.event_no))
    return events.map((event) => {
      const { trace, datatrail, heartbeats, transitions } = read.get(event.event_no)!
      return { event, trace, datatrail, heartbeats, transitions }
    })
  }
}
