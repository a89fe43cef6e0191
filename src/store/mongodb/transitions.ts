import type { FeedTransition, TransitionRecord } from '../../domain/records.js'
import { WRITTEN_STATUSES } from '../../vocabulary.js'
import { numberIn, plain } from './documents.js'

/**
 * The field of a trace document that keeps its history: transitions in the order written, each
 * `{event_no, key, from, to, at, by}`. event_no is repeated in every one so that a change stream's
 * update event, which names the document only by `_id`, carries the event of what it added.
 */
export const HISTORY_FIELD = 'transitions'

/** A transition as pushed onto a trace document. */
export type StoredTransition = FeedTransition

/** A stored value as a transition's `from`: text as it is; another writer's number or object as JSON. */
export const asFrom = (value: unknown): string | null => {
  if (value === undefined || value === null) return null
  return typeof value === 'string' ? value : JSON.stringify(plain(value))
}

const isText = (value: unknown): value is string => typeof value === 'string'
const isStatus = (value: unknown): value is TransitionRecord['to'] => (WRITTEN_STATUSES as readonly unknown[]).includes(value)

/**
 * One stored transition as the port's record, or null when it is not one: a document another program
 * wrote may hold anything under this field, and history reads what it can.
 */
export function toFeedTransition(value: unknown): FeedTransition | null {
  const item = plain(value)
  if (item === null || typeof item !== 'object' || Array.isArray(item)) return null
  const { event_no, key, from, to, at, by } = item as Record<string, unknown>
  const time = numberIn(at, Number.NaN)
  const eventNo = numberIn(event_no, Number.NaN)
  if (!isText(key) || !(from === null || isText(from)) || !isStatus(to) || !isText(by) || Number.isNaN(time) || Number.isNaN(eventNo)) {
    return null
  }
  return { event_no: eventNo, key, from, to, at: time, by }
}

/** A trace document's history, oldest first: by `at`, then the order written (the array's, kept by a stable sort). */
export function historyIn(stored: unknown): TransitionRecord[] {
  if (!Array.isArray(stored)) return []
  const transitions: TransitionRecord[] = []
  for (const item of stored) {
    const transition = toFeedTransition(item)
    if (transition === null) continue
    const { event_no: _eventNo, ...record } = transition
    transitions.push(record)
  }
  return transitions.sort((a, b) => a.at - b.at)
}

/** A stored number as numberIn reads one: an int32, int64 or double, finite. */
const finite = (path: string) => ({
  $and: [{ $in: [{ $type: path }, ['double', 'int', 'long']] }, { $gt: [path, -Infinity] }, { $lt: [path, Infinity] }]
})

/** The server's toFeedTransition: whether the element at `path` is a transition history reads. */
const isTransition = (path: string) => ({
  $and: [
    { $eq: [{ $type: `${path}.key` }, 'string'] },
    { $in: [{ $type: `${path}.from` }, ['null', 'string']] },
    { $in: [`${path}.to`, WRITTEN_STATUSES] },
    { $eq: [{ $type: `${path}.by` }, 'string'] },
    finite(`${path}.at`),
    finite(`${path}.event_no`)
  ]
})

const HISTORY = { $cond: [{ $isArray: `$${HISTORY_FIELD}` }, `$${HISTORY_FIELD}`, []] }

/**
 * A projection of a trace document to part of its history, made by the server: `part`, the first `count` of them after `after` (from the first with
 * null) in `at` order, then the order written, each as `{t, i}`, the transition and its index in
 * the array. The server reads the whole document whatever is projected, but only the part reaches
 * the service: no history is read whole, nor sorted, on its event loop.
 */
export function historyPart(after: { at: number; written: number } | null, count: number) {
  const follows =
    after === null
      ? true
      : { $or: [{ $gt: ['$$this.t.at', after.at] }, { $and: [{ $eq: ['$$this.t.at', after.at] }, { $gt: ['$$this.i', after.written] }] }] }
  const indexed = { $map: { input: { $range: [0, { $size: HISTORY }] }, as: 'i', in: { t: { $arrayElemAt: [HISTORY, '$$i'] }, i: '$$i' } } }
  const valid = { $filter: { input: indexed, cond: isTransition('$$this.t') } }
  const following = { $filter: { input: valid, cond: follows } }
  return {
    _id: 0,
    part: { $slice: [{ $sortArray: { input: following, sortBy: { 't.at': 1, i: 1 } } }, count] }
  }
}
