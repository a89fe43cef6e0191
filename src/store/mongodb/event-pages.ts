import type { Document, Filter, Sort } from 'mongodb'
import type { TimeWindow } from '../../domain/time-window.js'
import type { EventPageQuery, EventPosition } from '../../domain/records.js'

/**
 * The keyset condition of one page in (timestamp, event_no) order: strictly after `after`
 * (ascending) or before it (descending), up to the window's far bound. Written as a timestamp range
 * plus an $or for ties, so the (…, timestamp, event_no) indexes give a range scan in the order
 * returned; only events tied at the position's own timestamp are read and skipped. Before the first
 * page, the position is the window's near bound, inclusive at the start, exclusive at the end.
 */
export function keysetFilter(window: TimeWindow, ascending: boolean, after: EventPosition | undefined): Filter<Document> {
  if (after === undefined) return { timestamp: { $gte: new Date(window.start), $lt: new Date(window.end) } }
  const at = new Date(after.timestamp)
  return ascending
    ? {
        timestamp: { $gte: at, $lt: new Date(window.end) },
        $or: [{ timestamp: { $gt: at } }, { event_no: { $gt: after.event_no } }]
      }
    : {
        timestamp: { $lte: at, $gte: new Date(window.start) },
        $or: [{ timestamp: { $lt: at } }, { event_no: { $lt: after.event_no } }]
      }
}

/** The event page query's filters on top of the keyset condition. */
export function pageFilter(query: EventPageQuery): Filter<Document> {
  const filter: Document = keysetFilter(query.window, query.order === 'asc', query.after)
  const snr: Document = {}
  if (query.minSnr !== undefined) snr.$gte = query.minSnr
  if (query.maxSnr !== undefined) snr.$lte = query.maxSnr
  if (Object.keys(snr).length > 0) filter.snr = snr
  if (query.knownSourceName !== undefined) filter.known_source_name = query.knownSourceName
  if (query.basebandRequested !== undefined) filter.baseband_requested = query.basebandRequested
  return filter
}

export const pageOrder = (ascending: boolean): Sort => {
  const direction = ascending ? 1 : -1
  return { timestamp: direction, event_no: direction }
}
