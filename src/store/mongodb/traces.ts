import type { Db, Document, Filter } from 'mongodb'
import type { FeedTransition, HistoryPosition, TraceRecord, TransitionRecord } from '../../domain/records.js'
import { newTraceDocument } from '../../domain/trace.js'
import type { Sites, WrittenStatus } from '../../vocabulary.js'
import type { Adapter } from '../guarded-store.js'
import { StoreUnavailableError, type HistoryPage, type TraceCollection } from '../port.js'
import { numberIn, plain, plainDocument } from './documents.js'
import { isDuplicateKey, retryOnDuplicateKey } from './driver-errors.js'
import {
  HISTORY_FIELD,
  historyIn,
  historyPart,
  SUMMARY_CHECK,
  SUMMARY_FIELD,
  summaryIn,
  summaryOf,
  summaryUpdate,
  toFeedTransition
} from './history-summary.js'
import { COLLECTIONS } from './indexes.js'
import { recordReads, type MongoRecordWrites, type RecordReads, type RecordWriter } from './record-writes.js'

/** A trace as the port reads it: without `_id`, its history (which history() reads), nor the history's summary. */
export const TRACE_ONLY = { projection: { _id: 0, [HISTORY_FIELD]: 0, [SUMMARY_FIELD]: 0 } } as const

/** Attempts of one update-trace before its 503: an attempt is lost only to a writer of the same key (or once to a racing creation). */
export const STATUS_WRITE_ATTEMPTS = 10

/** Pushes `group` onto the history read as `read` (SUMMARY_CHECK), its summary kept in step, or marked out of step if the history moved since. */
async function pushTransitions(writer: RecordWriter, read: Document, group: readonly FeedTransition[]): Promise<void> {
  const eventNo = group[0]!.event_no
  const push = async (summary: ReturnType<typeof summaryIn>) => {
    const { filter, set, min } = summaryUpdate(summary, group)
    const update: Document = { $push: { [HISTORY_FIELD]: { $each: group } }, $set: set, ...(min === null ? {} : { $min: min }) }
    const result = await writer.update(COLLECTIONS.trace, eventNo, { event_no: eventNo, ...filter }, update)
    return result.matchedCount === 1 || summary === undefined
  }
  if (!(await push(summaryIn(read)))) await push(undefined)
}

/**
 * One document per event: the pipeline's flat slash keys, times in seconds, and the history. Each write is one
 * single-document operation, atomic on the server, so writers of different keys never lose one another's writes.
 */
export class MongoTraces implements Adapter<TraceCollection> {
  private readonly traces: RecordReads
  /** A new trace of the configured sites, every key `incomplete`, times to be filled in. */
  private readonly template: TraceRecord

  constructor(
    db: Db,
    sites: Sites,
    private readonly records: MongoRecordWrites
  ) {
    this.traces = recordReads(db, COLLECTIONS.trace)
    const { event_no: _eventNo, create_timestamp: _created, update_timestamp: _updated, ...keys } = newTraceDocument(sites, 0, 0)
    this.template = keys
  }

  /** Inserts the new document unless one exists; an existing one is not touched at all. */
  async create(eventNo: number, now: number): Promise<void> {
    const document = { event_no: eventNo, ...this.template, create_timestamp: now, update_timestamp: now }
    await this.records.write((writer) =>
      retryOnDuplicateKey(async () => {
        await writer.update(COLLECTIONS.trace, eventNo, { event_no: eventNo }, { $setOnInsert: document }, { upsert: true })
      })
    )
  }

  /**
   * update-trace: the stored value is read, then written by ONE updateOne whose filter holds it, so the key's `$set`
   * and its transition's `$push` happen together or not at all. A write that finds the key changed (or a racing
   * creation's E11000) is retried from a fresh read, so a transition's `from` is always the value it replaced. No
   * aggregation-pipeline update: it returns neither the old value needed as `from` nor the answer. After a changing
   * write lost, the next marks the summary out of step rather than hold it to it: one remaking is cheaper than a write
   * that may keep losing. The audit is kept even when unchanged, making up for a recompute lost earlier.
   */
  async setStatus(eventNo: number, key: string, status: WrittenStatus, now: number, by: string): Promise<boolean> {
    return this.records.write(async (writer) => {
      const write = (filter: Filter<Document>, update: Document, upsert = false) => writer.update(COLLECTIONS.trace, eventNo, filter, update, { upsert })
      const attempt = async (summaryTrusted: boolean): Promise<'changed' | 'unchanged' | 'lost'> => {
        const stored = await this.traces.findOne({ event_no: eventNo }, { projection: { _id: 0, [key]: 1, ...SUMMARY_CHECK } })
        const before: unknown = stored?.[key]
        // The value read, as a condition: missing is `$exists: false`, anything else by `$eq` (a stored object is a value, not a query).
        const filter: Filter<Document> = { event_no: eventNo, [key]: before === undefined ? { $exists: false } : { $eq: before } }
        if (before === status) {
          const result = await write(filter, { $set: { update_timestamp: now } })
          return result.matchedCount === 1 ? 'unchanged' : 'lost'
        }
        // A stored value as `from`: text as it is; another writer's number or object as JSON.
        const from = before === undefined || before === null ? null : typeof before === 'string' ? before : JSON.stringify(plain(before))
        const transition: FeedTransition = { event_no: eventNo, key, from, to: status, at: now, by }
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
        const { [key]: _set, ...otherKeys } = this.template
        update.$setOnInsert = { event_no: eventNo, ...otherKeys, create_timestamp: now }
        await write(filter, update, true)
        return 'changed'
      }
      let duplicateKeyMet = false
      let summaryTrusted = true
      for (let attempts = 0; attempts < STATUS_WRITE_ATTEMPTS; attempts++) {
        try {
          const outcome = await attempt(summaryTrusted)
          if (outcome !== 'lost') return outcome === 'changed'
          summaryTrusted = false
        } catch (error) {
          // A racing creation gives E11000 once; the next read finds its document. A second one is no race.
          if (!isDuplicateKey(error) || duplicateKeyMet) throw error
          duplicateKeyMet = true
        }
      }
      throw new StoreUnavailableError(`The trace of event ${eventNo} kept changing under concurrent writers; try again`)
    })
  }

  async find(eventNo: number): Promise<TraceRecord | null> {
    const document = await this.traces.findOne({ event_no: eventNo }, TRACE_ONLY)
    return document === null ? null : plainDocument(document)
  }

  async history(eventNo: number): Promise<TransitionRecord[]> {
    const document = await this.traces.findOne({ event_no: eventNo }, { projection: { _id: 0, [HISTORY_FIELD]: 1 } })
    return historyIn(document?.[HISTORY_FIELD])
  }

  /** The server cuts the part (historyPart), so only it reaches the service; a position is a transition's `at` and its index in the array. */
  async historyPage(eventNo: number, after: HistoryPosition | null, limit: number): Promise<HistoryPage> {
    const document = await this.traces.findOne({ event_no: eventNo }, { projection: historyPart(after, limit + 1) })
    const part = Array.isArray(document?.part) ? (document.part as unknown[]) : []
    const read = part.flatMap((item) => {
      const { t, i } = (item ?? {}) as { t?: unknown; i?: unknown }
      const transition = toFeedTransition(t)
      return transition === null ? [] : [{ transition, written: numberIn(i, Number.NaN) }]
    })
    const shown = read.slice(0, limit)
    const last = shown.at(-1)
    return {
      transitions: shown.map(({ transition: { event_no: _eventNo, ...record } }) => record),
      next: read.length > limit && last !== undefined ? { at: last.transition.at, written: last.written } : null
    }
  }

  /** Each existing trace's transitions pushed in one update, the traces' updates at once. */
  async record(transitions: readonly FeedTransition[]): Promise<number> {
    const byEvent = new Map<number, FeedTransition[]>()
    for (const transition of transitions) {
      const group = byEvent.get(transition.event_no)
      if (group === undefined) byEvent.set(transition.event_no, [transition])
      else group.push(transition)
    }
    if (byEvent.size === 0) return 0
    const existing = await this.traces.find({ event_no: { $in: [...byEvent.keys()] } }, { projection: { _id: 0, event_no: 1, ...SUMMARY_CHECK } }).toArray()
    const written = existing
      .map((document) => ({ document, group: byEvent.get(numberIn(document.event_no, -1)) ?? [] }))
      .filter(({ group }) => group.length > 0)
    if (written.length === 0) return 0
    // One update a trace rather than one bulk write: each is held to its own summary, and one that loses is made again alone.
    await this.records.write((writer) => Promise.all(written.map(({ document, group }) => pushTransitions(writer, document, group))))
    return written.reduce((sum, { group }) => sum + group.length, 0)
  }

  /** Whole-document replacements, `_id` dropped; a record that brings its history (a copy of this collection) has its summary made here. */
  async upsert(traces: readonly TraceRecord[]): Promise<number> {
    if (traces.length === 0) return 0
    const operations = traces.map(({ _id, [SUMMARY_FIELD]: _summary, ...trace }) => {
      const summary = summaryOf(trace[HISTORY_FIELD])
      const replacement = summary === null ? trace : { ...trace, [SUMMARY_FIELD]: summary }
      return { replaceOne: { filter: { event_no: trace.event_no }, replacement, upsert: true } }
    })
    const eventNos = traces.map((trace) => numberIn(trace.event_no, Number.NaN)).filter((eventNo) => !Number.isNaN(eventNo))
    await this.records.write((writer) => retryOnDuplicateKey(() => writer.bulk(COLLECTIONS.trace, eventNos, operations)))
    return traces.length
  }
}
