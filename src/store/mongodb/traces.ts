import type { Db, Document } from 'mongodb'
import type { FeedTransition, HistoryPosition, TraceRecord, TransitionRecord } from '../../domain/records.js'
import { newTraceDocument } from '../../domain/trace.js'
import type { Sites, WrittenStatus } from '../../vocabulary.js'
import type { Adapter } from '../guarded-store.js'
import type { HistoryPage, TraceCollection } from '../port.js'
import { numberIn, plainDocument } from './documents.js'
import { retryOnDuplicateKey } from './driver-errors.js'
import { SUMMARY_CHECK, SUMMARY_FIELD, summaryIn, summaryOf, summaryUpdate } from './history-summary.js'
import { COLLECTIONS } from './indexes.js'
import { recordReads, type MongoRecordWrites, type RecordReads, type RecordWriter } from './record-writes.js'
import { writeStatus } from './status-write.js'
import { HISTORY_FIELD, historyIn, historyPart, toFeedTransition } from './transitions.js'

/** A trace as the port reads it: without `_id`, and without its history, which history() reads, nor the history's summary. */
export const TRACE_ONLY = { projection: { _id: 0, [HISTORY_FIELD]: 0, [SUMMARY_FIELD]: 0 } } as const

/**
 * Pushes `group` onto the history of the trace read as `read` (with SUMMARY_CHECK), keeping its
 * summary in step where it was. A write that finds it no longer was (another program wrote the
 * history in between) is made again with the summary marked out of step, as one that was read so.
 */
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
 * Traces: one document per event with the flat slash keys the pipeline writes
 * (`stages/tsar_classification`, `stages/{stage}/sites/{site}`), plus event_no, create_timestamp
 * and update_timestamp in seconds, and the history of the changes update-trace made (see
 * status-write.ts). Every write is one single-document operation, atomic on the server, so writes of
 * different keys by any number of instances or pipeline processes never lose one another. Once a
 * write landed, the audit of each event it touched is brought up to date (record-writes.ts).
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

  /** The key, update_timestamp and, when the value changes, its transition: one conditional write. */
  async setStatus(eventNo: number, key: string, status: WrittenStatus, now: number, by: string): Promise<boolean> {
    // The audit is kept also when unchanged: a recompute lost earlier (a process stopped between the two) is made up for.
    return this.records.write((writer) => writeStatus(this.traces, writer, this.template, { eventNo, key, status, now, by }))
  }

  async find(eventNo: number): Promise<TraceRecord | null> {
    const document = await this.traces.findOne({ event_no: eventNo }, TRACE_ONLY)
    return document === null ? null : plainDocument(document)
  }

  async history(eventNo: number): Promise<TransitionRecord[]> {
    const document = await this.traces.findOne({ event_no: eventNo }, { projection: { _id: 0, [HISTORY_FIELD]: 1 } })
    return historyIn(document?.[HISTORY_FIELD])
  }

  /**
   * The history lives in the trace document, in the order written, and is read in `at` order: the
   * server cuts the part (historyPart) and counts the whole, so only the part reaches the service,
   * whatever the history's length. A position is a transition's `at` and its index in the array.
   */
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

  /**
   * Whole-document replacements in one unordered bulk write; an `_id` in the input is not kept. The
   * history goes with the document it replaces: a record that carries `transitions` (a copy of this
   * collection) brings its own, and the summary of it is made here, whatever summary the record carries.
   */
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
