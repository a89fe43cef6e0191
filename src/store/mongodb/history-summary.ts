import type { Document } from 'mongodb'
import type { FeedTransition, TransitionRecord } from '../../domain/records.js'
import { WRITTEN_STATUSES } from '../../vocabulary.js'
import { numberIn, plain } from './documents.js'

/** A trace's history, `{event_no, key, from, to, at, by}` in the order written: event_no in each names the event in a change stream's update. */
export const HISTORY_FIELD = 'transitions'

const isText = (value: unknown): value is string => typeof value === 'string'
const isStatus = (value: unknown): value is TransitionRecord['to'] => (WRITTEN_STATUSES as readonly unknown[]).includes(value)

/** One stored transition, or null when it is not one: another program may have written anything under this field. */
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
const finite = (path: string) => ({ $and: [{ $in: [{ $type: path }, ['double', 'int', 'long']] }, { $gt: [path, -Infinity] }, { $lt: [path, Infinity] }] })

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
 * A projection of a trace to `part`: its first `count` transitions after `after` by `at`, then order written,
 * each `{t, i}` with its index: no history is read whole, nor sorted, on the event loop.
 */
export function historyPart(after: { at: number; written: number } | null, count: number) {
  const follows =
    after === null
      ? true
      : { $or: [{ $gt: ['$$this.t.at', after.at] }, { $and: [{ $eq: ['$$this.t.at', after.at] }, { $gt: ['$$this.i', after.written] }] }] }
  const indexed = { $map: { input: { $range: [0, { $size: HISTORY }] }, as: 'i', in: { t: { $arrayElemAt: [HISTORY, '$$i'] }, i: '$$i' } } }
  const valid = { $filter: { input: indexed, cond: isTransition('$$this.t') } }
  const following = { $filter: { input: valid, cond: follows } }
  return { _id: 0, part: { $slice: [{ $sortArray: { input: following, sortBy: { 't.at': 1, i: 1 } } }, count] } }
}

/**
 * A trace's summary of its history for the audit, `{first_completions, last}`: each key's `at` of its first transition
 * to `complete` (all the facts read of a history) and the last element it covers. It is *in step* while `last` is the
 * history's last element (or both are none). Pushes keep it so in the same update, held to its being in step (IN_STEP),
 * so it is never carried over a history another program changed; else they mark it out of step (null), and the next
 * read of the facts makes it again (audit-records.ts). The watcher tells of a `$pull` or edit inside.
 */
export const SUMMARY_FIELD = 'history_summary'

type HistorySummary = { first_completions: Record<string, number>; last: unknown }

/** What to read of a trace to tell whether its summary is in step. */
export const SUMMARY_CHECK = { [SUMMARY_FIELD]: 1, [HISTORY_FIELD]: { $slice: -1 } } as const

/** A key that can name a field of the summary; the audit's keys all can (no dots in sites or stages). */
const summarisable = (key: string) => key !== '' && !key.includes('.') && !key.startsWith('$') && key !== '__proto__'

function firstCompletions(history: readonly unknown[]): Map<string, number> {
  const first = new Map<string, number>()
  for (const item of history) {
    const transition = toFeedTransition(item)
    if (transition === null || transition.to !== 'complete' || !summarisable(transition.key)) continue
    const seen = first.get(transition.key)
    if (seen === undefined || transition.at < seen) first.set(transition.key, transition.at)
  }
  return first
}

/** The summary of a history as stored; null when it has no element. */
export function summaryOf(history: unknown): HistorySummary | null {
  if (!Array.isArray(history) || history.length === 0) return null
  return { first_completions: Object.fromEntries(firstCompletions(history)), last: history.at(-1) ?? null }
}

const sameValue = (a: unknown, b: unknown) => JSON.stringify(plain(a)) === JSON.stringify(plain(b))
const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value)

/** The summary of a trace read with SUMMARY_CHECK (null: no history); undefined when out of step: then the whole history is read. */
export function summaryIn(document: Document): HistorySummary | null | undefined {
  const history: unknown = document[HISTORY_FIELD]
  const last: unknown[] = Array.isArray(history) ? history.slice(-1) : []
  const summary: unknown = document[SUMMARY_FIELD]
  if (summary === undefined || summary === null) return last.length === 0 ? null : undefined
  if (!isObject(summary) || !isObject(summary.first_completions) || last.length === 0 || !sameValue(summary.last, last[0])) return undefined
  const completions = Object.entries(plain(summary.first_completions) as Record<string, unknown>)
  if (!completions.every(([, at]) => typeof at === 'number' && Number.isFinite(at))) return undefined
  return { first_completions: Object.fromEntries(completions) as Record<string, number>, last: summary.last }
}

/** A summary as the transitions factsOf reads of a history: each key's first completion. */
export const completionsIn = (summary: HistorySummary | null) =>
  Object.entries(summary?.first_completions ?? {}).map(([key, at]) => ({ key, to: 'complete', at: numberIn(at, Number.NaN) }))

const HAS_ELEMENTS = { $gt: [{ $size: HISTORY }, 0] }
/** The server's summaryIn, for a write's filter: the summary is in step, as a summary or as none. */
const IN_STEP = {
  summary: {
    $and: [{ $eq: [{ $type: `$${SUMMARY_FIELD}` }, 'object'] }, HAS_ELEMENTS, { $eq: [{ $arrayElemAt: [HISTORY, -1] }, `$${SUMMARY_FIELD}.last`] }]
  },
  none: { $and: [{ $eq: [{ $ifNull: [`$${SUMMARY_FIELD}`, null] }, null] }, { $not: [HAS_ELEMENTS] }] }
}

/** What a push of `pushed` adds to filter, `$set` and `$min` to keep `summary` in step; one out of step (undefined) is marked so until remade. */
export function summaryUpdate(
  summary: HistorySummary | null | undefined,
  pushed: readonly unknown[]
): { filter: Document; set: Document; min: Document | null } {
  if (summary === undefined) return { filter: {}, set: { [SUMMARY_FIELD]: null }, min: null }
  if (summary === null) return { filter: { $expr: IN_STEP.none }, set: { [SUMMARY_FIELD]: summaryOf(pushed) }, min: null }
  const first = [...firstCompletions(pushed)].map(([key, at]) => [`${SUMMARY_FIELD}.first_completions.${key}`, at] as const)
  return { filter: { $expr: IN_STEP.summary }, set: { [`${SUMMARY_FIELD}.last`]: pushed.at(-1) ?? null }, min: first.length === 0 ? null : Object.fromEntries(first) }
}

const isHistoryPath = (path: string) => path === HISTORY_FIELD || path.startsWith(`${HISTORY_FIELD}.`)
export const isSummaryPath = (path: string) => path === SUMMARY_FIELD || path.startsWith(`${SUMMARY_FIELD}.`)

/** Whether a change of a trace updates its history without its summary: another program's, which may leave the summary untrue. */
export function changesHistoryAlone(change: Document): boolean {
  if (change.operationType !== 'update') return false
  const description = (change.updateDescription ?? {}) as Document
  const removed: unknown[] = Array.isArray(description.removedFields) ? description.removedFields : []
  const truncated: unknown[] = Array.isArray(description.truncatedArrays) ? description.truncatedArrays : []
  const paths = [
    ...Object.keys((description.updatedFields ?? {}) as Document),
    ...removed.filter((path) => typeof path === 'string'),
    ...truncated.map((item): unknown => (item as Document | null)?.field).filter((path) => typeof path === 'string')
  ]
  return paths.some(isHistoryPath) && !paths.some(isSummaryPath)
}
