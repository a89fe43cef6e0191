import type { Document } from 'mongodb'
import type { FeedTransition } from '../../domain/records.js'
import { HISTORY_FIELD, toFeedTransition } from './transitions.js'

/**
 * Of the `trace` collection's stream, inserts, updates (replacements are bulk imports, whose history
 * is not new) and invalidations; of each only its history, with no `fullDocument` lookup per update
 * (each transition carries its event_no).
 */
export const FEED_PIPELINE: Document[] = [
  { $match: { operationType: { $in: ['insert', 'update', 'invalidate'] } } },
  { $project: { operationType: 1, [`fullDocument.${HISTORY_FIELD}`]: 1, 'updateDescription.updatedFields': 1 } }
]

/** `transitions.12`, as an update reports a `$push` onto an existing array. */
const PUSHED = new RegExp(`^${HISTORY_FIELD}\\.(\\d+)$`)

const lastOf = (history: unknown): unknown[] => (Array.isArray(history) && history.length > 0 ? [history[history.length - 1]] : [])

/**
 * The transitions one change added, in the order written. Every write of this service pushes one, so
 * of a whole history (set for the first time, or a new document) only the last is new: a trace copied
 * in with its history adds at most that one to the feed, not all its past.
 */
export function transitionsIn(change: Document): FeedTransition[] {
  let added: unknown[] = []
  if (change.operationType === 'insert') added = lastOf((change.fullDocument as Document | undefined)?.[HISTORY_FIELD])
  if (change.operationType === 'update') {
    const fields = ((change.updateDescription as Document | undefined)?.updatedFields ?? {}) as Document
    const pushed: [number, unknown][] = []
    for (const [path, value] of Object.entries(fields)) {
      if (path === HISTORY_FIELD) added.push(...lastOf(value))
      const index = PUSHED.exec(path)?.[1]
      if (index !== undefined) pushed.push([Number(index), value])
    }
    added.push(...pushed.sort(([a], [b]) => a - b).map(([, value]) => value))
  }
  return added.map(toFeedTransition).filter((transition) => transition !== null)
}
