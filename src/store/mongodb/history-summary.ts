import type { Document } from 'mongodb'
import { numberIn, plain } from './documents.js'
import { HISTORY_FIELD, toFeedTransition } from './transitions.js'

/**
 * The field of a trace document that summarises its history for the audit, `{first_completions,
 * last}`: of each key, the `at` of its first transition to `complete`, which is all the facts read
 * of a history (applyTransition, kept-facts.ts), and the history's last element as it covers it.
 * An event's facts read this and the history's last element, never the history (audit-records.ts).
 *
 * The summary is *in step* while its `last` is still the history's last element (or, with no
 * summary, while the history has none). The service's own pushes keep it so in the same update,
 * held to its being in step (`$expr`, IN_STEP), so that it is never carried forward over a history
 * another program changed: a push onto a history out of step marks the summary so (null). A
 * summary out of step, or missing (a document written before the summary was, or by another
 * program), is made again from the whole history by the next read of the event's facts, which
 * uses that history meanwhile (a fallback rather than a migration at start: see audit-records.ts).
 * What leaves the last element as it was (another program's `$pull`, or its edit of a transition
 * inside the history) is told by the change-stream watcher, which marks the summary out of step.
 */
export const SUMMARY_FIELD = 'history_summary'

export interface HistorySummary {
  first_completions: Record<string, number>
  /** The history's last element, as stored. */
  last: unknown
}

/** What to read of a trace document to tell whether its summary is in step: the summary, and the last element of its history only. */
export const SUMMARY_CHECK = { [SUMMARY_FIELD]: 1, [HISTORY_FIELD]: { $slice: -1 } } as const

/** A key that can name a field of the summary; the audit's keys all can (no dots in sites or stages). */
const summarisable = (key: string) => key !== '' && !key.includes('.') && !key.startsWith('$') && key !== '__proto__'

/** Of each key, the `at` of its first transition to `complete`, of the stored transitions that are ones (as historyIn reads them). */
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

/** The summary of a history as stored; null when it has no element (not an array, or an empty one). */
export function summaryOf(history: unknown): HistorySummary | null {
  if (!Array.isArray(history) || history.length === 0) return null
  return { first_completions: Object.fromEntries(firstCompletions(history)), last: history.at(-1) ?? null }
}

const sameValue = (a: unknown, b: unknown) => JSON.stringify(plain(a)) === JSON.stringify(plain(b))
const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value)

/**
 * The summary of a trace document read with SUMMARY_CHECK, when it is in step with the history:
 * null for a document whose history has no element (nor summary). Undefined when it is not in
 * step, or is not one: the facts must then be made from the whole history.
 */
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

const ARRAY = { $cond: [{ $isArray: `$${HISTORY_FIELD}` }, `$${HISTORY_FIELD}`, []] }
const HAS_ELEMENTS = { $gt: [{ $size: ARRAY }, 0] }
/** The server's summaryIn, for a write's filter: the summary is in step, as a summary or as none. */
const IN_STEP = {
  summary: {
    $and: [{ $eq: [{ $type: `$${SUMMARY_FIELD}` }, 'object'] }, HAS_ELEMENTS, { $eq: [{ $arrayElemAt: [ARRAY, -1] }, `$${SUMMARY_FIELD}.last`] }]
  },
  none: { $and: [{ $eq: [{ $ifNull: [`$${SUMMARY_FIELD}`, null] }, null] }, { $not: [HAS_ELEMENTS] }] }
}

/** What an update that pushes transitions adds to its filter and to its `$set` and `$min`, to keep the summary as it is. */
export interface SummaryUpdate {
  filter: Document
  set: Document
  min: Document | null
}

/**
 * What keeps the summary of a document whose summary was read as `summary` (summaryIn; undefined:
 * out of step) when `pushed` is pushed onto its history: held to the summary being still in step,
 * its last element and each key's first completion moved on; or, out of step, marked so, with no
 * condition (a summary once out of step stays so until it is made again from the whole history).
 */
export function summaryUpdate(summary: HistorySummary | null | undefined, pushed: readonly unknown[]): SummaryUpdate {
  if (summary === undefined) return { filter: {}, set: { [SUMMARY_FIELD]: null }, min: null }
  if (summary === null) return { filter: { $expr: IN_STEP.none }, set: { [SUMMARY_FIELD]: summaryOf(pushed) }, min: null }
  const first = [...firstCompletions(pushed)].map(([key, at]) => [`${SUMMARY_FIELD}.first_completions.${key}`, at] as const)
  return { filter: { $expr: IN_STEP.summary }, set: { [`${SUMMARY_FIELD}.last`]: pushed.at(-1) ?? null }, min: first.length === 0 ? null : Object.fromEntries(first) }
}

/** Whether a path an update reports is of the history, or of its summary. */
export const isHistoryPath = (path: string) => path === HISTORY_FIELD || path.startsWith(`${HISTORY_FIELD}.`)
export const isSummaryPath = (path: string) => path === SUMMARY_FIELD || path.startsWith(`${SUMMARY_FIELD}.`)

/**
 * Whether a change event of the trace collection is an update that changed a history without its
 * summary: another program's (each of this service's pushes moves the summary's `last` or marks it
 * out of step). Its summary may then no longer be true of the history even where its last element
 * is the same (a `$pull`, an edit inside the history).
 */
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
