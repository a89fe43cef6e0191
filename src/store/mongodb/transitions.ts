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
