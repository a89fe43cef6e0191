import type { Document, Filter } from 'mongodb'
import type { TraceRecord } from '../../domain/records.js'
import type { WrittenStatus } from '../../vocabulary.js'
import { StoreUnavailableError } from '../port.js'
import { isDuplicateKey } from './driver-errors.js'
import { SUMMARY_CHECK, summaryIn, summaryUpdate } from './history-summary.js'
import { COLLECTIONS } from './indexes.js'
import type { RecordReads, RecordWriter } from './record-writes.js'
import { asFrom, HISTORY_FIELD, type StoredTransition } from './transitions.js'

/**
 * Attempts of one update-trace before it gives up with 503. Writers of different keys never conflict
 * (a lost race to create the trace costs one attempt); each attempt that loses was beaten by a writer
 * of the same key, so this many are lost only under a flood of writes of one key.
 */
export const STATUS_WRITE_ATTEMPTS = 10

type Outcome = 'changed' | 'unchanged' | 'lost'

/** One update-trace: set `key` of event `eventNo` to `status` at `now`, written by `by`. */
export interface StatusChange {
  eventNo: number
  key: string
  status: WrittenStatus
  now: number
  by: string
}

/**
 * update-trace on MongoDB: the stored value is read, then written with ONE conditional updateOne
 * whose filter holds that value, so the `$set` of the key and the `$push` of its transition onto the
 * trace's `transitions` array happen together, in one atomic single-document write, or not at all.
 * A writer that changed the key in between makes the filter match nothing: the write is retried from
 * a fresh read, so a transition's `from` is always the value its write replaced. An upsert of a trace
 * no one had created meets E11000 when another writer creates it first, and is retried the same way.
 *
 * Why not one update with an aggregation pipeline (`$cond` on the old value, pushing only when it
 * differs): the service needs the old value itself, as `from` and to answer whether anything
 * changed, and an update returns neither; reading it back afterwards would race again. The
 * conditional write needs no server-side expressions, and an unchanged value costs one read and one
 * small write (update_timestamp only, nothing pushed).
 *
 * A push keeps the summary of the history in the same update (history-summary.ts), held to its
 * being in step as read. After a changing write that lost, the next marks the summary out of step
 * instead: whether the key or the summary moved is not told apart, and a summary made again once
 * from the history is cheaper than a write that might keep losing to a condition it cannot meet.
 */
export async function writeStatus(traces: RecordReads, writer: RecordWriter, template: TraceRecord, change: StatusChange): Promise<boolean> {
  let duplicateKeyMet = false
  let summaryTrusted = true
  for (let attempt = 0; attempt < STATUS_WRITE_ATTEMPTS; attempt++) {
    try {
      const outcome = await attemptOnce(traces, writer, template, change, summaryTrusted)
      if (outcome !== 'lost') return outcome === 'changed'
      summaryTrusted = false
    } catch (error) {
      // A racing creation gives E11000 once; the next read finds its document. A second one is no race.
      if (!isDuplicateKey(error) || duplicateKeyMet) throw error
      duplicateKeyMet = true
    }
  }
  throw new StoreUnavailableError(`The trace of event ${change.eventNo} kept changing under concurrent writers; try again`)
}

async function attemptOnce(
  traces: RecordReads,
  writer: RecordWriter,
  template: TraceRecord,
  { eventNo, key, status, now, by }: StatusChange,
  summaryTrusted: boolean
): Promise<Outcome> {
  const write = (filter: Filter<Document>, update: Document, upsert = false) => writer.update(COLLECTIONS.trace, eventNo, filter, update, { upsert })
  const stored = await traces.findOne({ event_no: eventNo }, { projection: { _id: 0, [key]: 1, ...SUMMARY_CHECK } })
  const before: unknown = stored?.[key]
  // The value read, as a condition: missing is `$exists: false`, anything else by `$eq` (a stored object is a value, not a query).
  const filter: Filter<Document> = { event_no: eventNo, [key]: before === undefined ? { $exists: false } : { $eq: before } }
  if (before === status) {
    const result = await write(filter, { $set: { update_timestamp: now } })
    return result.matchedCount === 1 ? 'unchanged' : 'lost'
  }
  const transition: StoredTransition = { event_no: eventNo, key, from: asFrom(before), to: status, at: now, by }
  // No document yet: no history, and no summary.
  const summary = summaryUpdate(!summaryTrusted ? undefined : stored === null ? null : summaryIn(stored), [transition])
  Object.assign(filter, summary.filter)
  const update: Document = { $set: { [key]: status, update_timestamp: now, ...summary.set }, $push: { [HISTORY_FIELD]: transition } }
  if (summary.min !== null) update.$min = summary.min
  if (stored !== null) {
    const result = await write(filter, update)
    return result.matchedCount === 1 ? 'changed' : 'lost'
  }
  // No trace yet: an upsert creates it whole. A path may not be in two operators, so `key` leaves the insert part.
  const { [key]: _set, ...otherKeys } = template
  update.$setOnInsert = { event_no: eventNo, ...otherKeys, create_timestamp: now }
  await write(filter, update, true)
  return 'changed'
}
