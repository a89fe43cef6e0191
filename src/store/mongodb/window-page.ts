import type { Db } from 'mongodb'
import type { EventPosition, WindowEventParts } from '../../domain/records.js'
import type { TimeWindow } from '../../domain/time-window.js'
import type { AuditRecords } from './audit-records.js'
import { WITHOUT_ID } from './documents.js'
import { keysetFilter, pageOrder } from './event-pages.js'
import { toEvent } from './event-documents.js'
import { COLLECTIONS } from './indexes.js'
import { recordReads, type RecordReads } from './record-writes.js'

/**
 * The window reads of stage latency and the command-line audit's recompute: a page of requested
 * events (whole records), then what their facts are made from, with the bounded read of the kept
 * audit (audit-records.ts): of each trace its keys and the summary of its history, never the
 * history; the newest finished and erring heartbeat of each site, never all of them. Not one
 * snapshot, as on SQLite: the parts are independent documents, each read as it stands.
 */
export class WindowPages {
  private readonly events: RecordReads

  constructor(
    db: Db,
    private readonly records: AuditRecords
  ) {
    this.events = recordReads(db, COLLECTIONS.events)
  }

  async page(window: TimeWindow, after: EventPosition | undefined, limit: number): Promise<WindowEventParts[]> {
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
