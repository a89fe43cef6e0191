import type { Db, Document } from 'mongodb'
import type { EventPosition, WindowEventParts } from '../../domain/records.js'
import type { TimeWindow } from '../../domain/time-window.js'
import { toDatatrailRecord } from './datatrail.js'
import { numberIn, plainDocument, WITHOUT_ID } from './documents.js'
import { keysetFilter, pageOrder } from './event-pages.js'
import { toEvent } from './event-documents.js'
import { toHeartbeatRecord } from './heartbeats.js'
import { COLLECTIONS } from './indexes.js'
import { recordReads, type RecordReads } from './record-writes.js'
import { SUMMARY_FIELD } from './history-summary.js'
import { HISTORY_FIELD, historyIn } from './transitions.js'

/** Documents grouped by the event they belong to, in the order read. */
function byEvent(documents: readonly Document[]): Map<number, Document[]> {
  const groups = new Map<number, Document[]>()
  for (const document of documents) {
    const eventNo = numberIn(document.event_no, -1)
    const group = groups.get(eventNo)
    if (group === undefined) groups.set(eventNo, [document])
    else group.push(document)
  }
  return groups
}

/**
 * The window reads of the audit and stage latency: a page of requested events (whole records), then
 * the page's traces, datatrail members and heartbeats with one `$in` query each, on the event_no
 * indexes, run at once. The transitions come with the traces (each trace keeps its own history).
 * Not one snapshot, as on SQLite: the parts are independent documents, each read as it stands.
 */
export class WindowPages {
  private readonly events: RecordReads
  private readonly traces: RecordReads
  private readonly datatrail: RecordReads
  private readonly heartbeats: RecordReads

  constructor(db: Db) {
    this.events = recordReads(db, COLLECTIONS.events)
    this.traces = recordReads(db, COLLECTIONS.trace)
    this.datatrail = recordReads(db, COLLECTIONS.datatrail)
    this.heartbeats = recordReads(db, COLLECTIONS.heartbeats)
  }

  async page(window: TimeWindow, after: EventPosition | undefined, limit: number): Promise<WindowEventParts[]> {
    const filter = { baseband_requested: true, ...keysetFilter(window, true, after) }
    const events = (await this.events.find(filter, { ...WITHOUT_ID, sort: pageOrder(true), limit }).toArray()).map(toEvent)
    if (events.length === 0) return []
    const ofPage = { event_no: { $in: events.map((event) => event.event_no) } }
    const [traces, members, heartbeats] = await Promise.all([
      this.traces.find(ofPage, WITHOUT_ID).toArray(),
      this.datatrail.find(ofPage, { ...WITHOUT_ID, sort: { event_no: 1, member: 1 } }).toArray(),
      this.heartbeats.find(ofPage, { ...WITHOUT_ID, sort: { event_no: 1, heartbeat_id: 1 } }).toArray()
    ])
    const traceOf = new Map(traces.map((trace) => [numberIn(trace.event_no, -1), trace]))
    const membersOf = byEvent(members)
    const heartbeatsOf = byEvent(heartbeats)
    return events.map((event) => {
      const stored = traceOf.get(event.event_no)
      const { [HISTORY_FIELD]: history, [SUMMARY_FIELD]: _summary, ...trace } = stored === undefined ? {} : plainDocument(stored)
      return {
        event,
        trace: stored === undefined ? null : trace,
        datatrail: (membersOf.get(event.event_no) ?? []).map(toDatatrailRecord),
        heartbeats: (heartbeatsOf.get(event.event_no) ?? []).map(toHeartbeatRecord),
        transitions: historyIn(history)
      }
    })
  }
}
