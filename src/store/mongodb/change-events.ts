import type { Document } from 'mongodb'
import type { FeedTransition } from '../../domain/records.js'
import { HISTORY_FIELD, toFeedTransition } from './transitions.js'

/**
 * What the feed asks of the `trace` collection's change stream: inserts and updates (the writes
 * update-trace makes; replacements are bulk imports, whose history is not new), and invalidations,
 * after which the stream must start again. The server drops everything else of each change but the
 * resume token (`_id`): no `fullDocument` lookup per update (each transition carries its event_no),
 * and of an insert only its history.
 */
export const FEED_PIPELINE: Document[] = [
  { $match: { operationType: { $in: ['insert', 'update', 'invalidate'] } } },
  { $project: { operationType: 1, [`fullDocument.${HISTORY_FIELD}`]: 1, 'updateDescription.updatedFields': 1 } }
]

const PUSHED = new RegExp(`^${HISTORY_FIELD}\\.(\\d+)$`)

/** `transitions.12` as an update reports a `$push` onto an existing array: the index, else undefined. */
function pushedIndex(path: string): number | undefined {
  const match = PUSHED.exec(path)
  return match === null ? undefined : Number(match[1])
}

const lastOf = (history: unknown): unknown[] => (Array.isArray(history) && history.length > 0 ? [history[history.length - 1]] : [])

/**
 * The transitions one change added, in the order written. Every write of this service pushes exactly
 * one, so where a change shows a whole history (the array set for the first time, or a new document)
 * only its last entry is new: a trace copied in with its history from elsewhere adds at most that
 * one to the feed, not all its past. An update by another program shows none.
 */
export function transitionsIn(change: Document): FeedTransition[] {
  let added: unknown[] = []
  if (change.operationType === 'insert') added = lastOf((change.fullDocument as Document | undefined)?.[HISTORY_FIELD])
  if (change.operationType === 'update') {
    const fields = ((change.updateDescription as Document | undefined)?.updatedFields ?? {}) as Document
    const pushed: [number, unknown][] = []
    for (const [path, value] of Object.entries(fields)) {
      if (path === HISTORY_FIELD) added.push(...lastOf(value))
      const index = pushedIndex(path)
      if (index !== undefined) pushed.push([index, value])
    }
    added.push(...pushed.sort(([a], [b]) => a - b).map(([, value]) => value))
  }
  return added.map(toFeedTransition).filter((transition) => transition !== null)
}
