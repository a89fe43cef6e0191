import type { Db, IndexDescription } from 'mongodb'
import { isUnavailable } from './driver-errors.js'

/** The collections: `trace` is the one the pipeline writes, shared with it; `audit` is this service's own (kept-documents.ts). */
export const COLLECTIONS = { users: 'users', events: 'events', trace: 'trace', datatrail: 'datatrail', heartbeats: 'heartbeats', audit: 'audit' } as const

/**
 * The heartbeats of a site whose newest an event's facts keep (audit-records.ts): finished (a finish time in text,
 * as the service writes it) and erring (non-empty text; `$gt` compares text with text only). Each filters a
 * partial index below: the newest of a kind is one seek.
 */
export const HEARTBEAT_KINDS = { finished: { 'received.finished_time': { $type: 'string' } }, erring: { 'sent.error': { $gt: '' } } } as const

/** Unique indexes make upserts by key safe; the others make range scans in order. Default names (`event_no_1`...): the pipeline's index is the same. */
export const INDEXES: Record<keyof typeof COLLECTIONS, IndexDescription[]> = {
  users: [{ key: { name: 1 }, unique: true }],
  events: [
    { key: { event_no: 1 }, unique: true },
    // Event list pages and the window scans: keyset order (timestamp, event_no).
    { key: { timestamp: 1, event_no: 1 } },
    // Baseband callbacks and the baseband_requested filter: equality first, then the same order.
    { key: { baseband_requested: 1, timestamp: 1, event_no: 1 } },
    { key: { known_source_name: 1, timestamp: 1, event_no: 1 } }
  ],
  trace: [{ key: { event_no: 1 }, unique: true }],
  datatrail: [{ key: { event_no: 1, member: 1 }, unique: true }],
  heartbeats: [
    { key: { heartbeat_id: 1 }, unique: true },
    { key: { event_no: 1, heartbeat_id: 1 } },
    // Partial: each holds only the heartbeats of its kind, so neither is searched past others however many an event has.
    { key: { event_no: 1, site: 1, heartbeat_id: 1 }, name: 'heartbeats_finished', partialFilterExpression: HEARTBEAT_KINDS.finished },
    { key: { site: 1, event_no: 1, heartbeat_id: 1 }, name: 'heartbeats_erring', partialFilterExpression: HEARTBEAT_KINDS.erring }
  ],
  audit: [
    { key: { event_no: 1 }, unique: true },
    // The window audit: audited events only, in keyset order (event time, event_no).
    { key: { listed: 1, event_time: 1, event_no: 1 } },
    // The deadline check: events whose next deadline has passed, earliest first.
    { key: { due_at: 1 } },
    // And those whose look was made under a clock that has since moved back.
    { key: { looked_at: 1 } }
  ]
}

/** Creates the missing indexes. Fails, without retry, when the data breaks a unique index (another program's two traces of one event). */
export async function ensureIndexes(db: Db): Promise<void> {
  for (const [name, indexes] of Object.entries(INDEXES) as [keyof typeof COLLECTIONS, IndexDescription[]][]) {
    try {
      await db.collection(COLLECTIONS[name]).createIndexes(indexes)
    } catch (error) {
      if (isUnavailable(error)) throw error
      throw new Error(`Cannot create the indexes of the MongoDB collection ${COLLECTIONS[name]}: ${(error as Error).message}`, {
        cause: error
      })
    }
  }
}
