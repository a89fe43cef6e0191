import type { Collection, Db, Document } from 'mongodb'
import type { EventRecords } from '../../domain/audit/kept-facts.js'
import { numberIn, plainDocument, WITHOUT_ID } from './documents.js'
import { toEvent } from './event-documents.js'
import { COLLECTIONS, HEARTBEAT_KINDS } from './indexes.js'
import { completionsIn, SUMMARY_CHECK, SUMMARY_FIELD, summaryIn } from './history-summary.js'
import { recordReads, type HistorySummaryWrites, type RecordReads } from './record-writes.js'
import { HISTORY_FIELD, historyIn } from './transitions.js'
import type { Sites } from '../../vocabulary.js'

/** Everything stored of one event as factsOf reads it, and whether anything is stored at all. */
export interface StoredRecords extends EventRecords {
  datatrail: { member: string; value: Record<string, unknown> }[]
  heartbeats: { heartbeat: Record<string, unknown> }[]
  /** False when the event has no event document, trace, datatrail member or heartbeat. */
  any: boolean
}

/** Of a heartbeat, only what applyHeartbeat reads. */
const HEARTBEAT_FACTS = { _id: 0, event_no: 1, heartbeat_id: 1, site: 1, 'sent.error': 1, 'received.finished_time': 1, 'received.total_data_files': 1 } as const

const none = (): StoredRecords => ({ event: null, trace: null, datatrail: [], heartbeats: [], transitions: [], any: false })

/**
 * Reads the records of events to make their facts from, a bounded number of documents however
 * many an event has: the event, the trace, the datatrail members (by event_no, on the event_no
 * indexes), and of each configured site the newest finished heartbeat and the newest reporting an
 * error (HEARTBEAT_KINDS): the only heartbeats factsOf keeps anything of, so it makes the same
 * facts of these as of all. Of the trace only the audited keys and the summary of its history are
 * read, with the history's last element to tell that the summary is in step (history-summary.ts):
 * each key's first completion, all factsOf keeps of a history, so it makes the same facts of the
 * summary as of the whole. Not one snapshot: each document is read as it stands, which is why a
 * write recomputes after it lands (see the keeper's `keep`, src/kept-audit/keeper.ts).
 *
 * A summary out of step or missing (a document written before summaries were, or a history
 * another program wrote) is made up for here: the facts are made from that trace's whole history,
 * read once more, and the summary is made again from it, so that the next read is bounded again.
 * Why this rather than a migration at start: the trace collection is shared with the pipeline and
 * may hold years of histories, which a start would read whole before serving (503 meanwhile),
 * and another program's write can leave a summary out of step at any time after a start, so the
 * fallback is needed anyway. The verifier's pass reads every event within the hour, so a store
 * written before summaries has them all after its first pass.
 */
export class AuditRecords {
  private readonly events: RecordReads
  private readonly traces: RecordReads
  private readonly datatrail: RecordReads
  private readonly heartbeats: RecordReads
  private readonly audits: Collection

  /** What a fact read takes of a trace: the audited keys, and the summary of its history with the history's last element. */
  private readonly traceFacts: Document

  /** `summaries` writes the summaries made again from whole histories; without it (a test's reader) they are used, not written. */
  constructor(
    db: Db,
    private readonly sites: Sites,
    private readonly summaries?: HistorySummaryWrites
  ) {
    this.traceFacts = { _id: 0, event_no: 1, ...Object.fromEntries(sites.traceKeys.map((key) => [key, 1])), ...SUMMARY_CHECK }
    this.events = recordReads(db, COLLECTIONS.events)
    this.traces = recordReads(db, COLLECTIONS.trace)
    this.datatrail = recordReads(db, COLLECTIONS.datatrail)
    this.heartbeats = recordReads(db, COLLECTIONS.heartbeats)
    this.audits = db.collection(COLLECTIONS.audit)
  }

  /** The records of each event, by event_no. One event, the path of every single write, is read with findOne where a query gives one document. */
  async of(eventNos: readonly number[]): Promise<Map<number, StoredRecords>> {
    const records = new Map(eventNos.map((eventNo) => [eventNo, none()]))
    if (eventNos.length === 0) return records
    const only = eventNos.length === 1 ? eventNos[0]! : undefined
    const filter = only === undefined ? { event_no: { $in: [...eventNos] } } : { event_no: only }
    const one = async (collection: RecordReads, options: { projection: Document } = WITHOUT_ID) => {
      if (only === undefined) return collection.find(filter, options).toArray()
      const document = await collection.findOne(filter, options)
      return document === null ? [] : [document]
    }
    const [events, traces, members, heartbeats] = await Promise.all([
      one(this.events),
      one(this.traces, { projection: this.traceFacts }),
      this.datatrail.find(filter, { ...WITHOUT_ID, sort: { event_no: 1, member: 1 } }).toArray(),
      Promise.all(eventNos.map((eventNo) => this.newestHeartbeats(eventNo))).then((found) => found.flat())
    ])
    const of = (document: Document) => records.get(numberIn(document.event_no, Number.NaN))
    for (const document of events) {
      const item = of(document)
      if (item === undefined) continue
      item.event = toEvent(document)
      item.any = true
    }
    const outOfStep: number[] = []
    for (const document of traces) {
      const item = of(document)
      if (item === undefined) continue
      const { [HISTORY_FIELD]: _last, [SUMMARY_FIELD]: _summary, ...trace } = plainDocument(document)
      item.trace = trace
      const summary = summaryIn(document)
      if (summary === undefined) outOfStep.push(numberIn(document.event_no, Number.NaN))
      else item.transitions = completionsIn(summary)
      item.any = true
    }
    if (outOfStep.length > 0) await this.fromWholeHistories(outOfStep, records)
    for (const document of members) {
      const item = of(document)
      if (item === undefined) continue
      const { member, value } = plainDocument(document)
      item.datatrail.push({ member: String(member), value: (value ?? {}) as Record<string, unknown> })
      item.any = true
    }
    for (const document of heartbeats) {
      const item = of(document)
      if (item === undefined) continue
      item.heartbeats.push({ heartbeat: plainDocument(document) })
      item.any = true
    }
    return records
  }

  /** The transitions of traces whose summary is out of step, from their whole histories; their summaries made again from these. */
  private async fromWholeHistories(eventNos: readonly number[], records: Map<number, StoredRecords>): Promise<void> {
    const projection = { _id: 0, event_no: 1, [HISTORY_FIELD]: 1, [SUMMARY_FIELD]: 1 }
    const only = eventNos.length === 1 ? eventNos[0]! : undefined
    const documents =
      only === undefined
        ? await this.traces.find({ event_no: { $in: [...eventNos] } }, { projection }).toArray()
        : [await this.traces.findOne({ event_no: only }, { projection })].filter((document) => document !== null)
    await Promise.all(
      documents.map(async (document) => {
        const eventNo = numberIn(document.event_no, Number.NaN)
        const item = records.get(eventNo)
        if (item === undefined) return
        item.transitions = historyIn(document[HISTORY_FIELD])
        await this.summaries?.repair(eventNo, document)
      })
    )
  }

  /** Of each configured site, the newest heartbeat of each kind, in heartbeat_id order (one heartbeat of both kinds once). */
  private async newestHeartbeats(eventNo: number): Promise<Document[]> {
    const queries = this.sites.names.flatMap((site) =>
      Object.values(HEARTBEAT_KINDS).map((kind) =>
        this.heartbeats.find({ event_no: eventNo, site, ...kind }, { projection: HEARTBEAT_FACTS, sort: { heartbeat_id: -1 }, limit: 1 }).toArray()
      )
    )
    const byId = new Map<number, Document>()
    for (const document of (await Promise.all(queries)).flat()) byId.set(numberIn(document.heartbeat_id, Number.NaN), document)
    return [...byId.entries()].sort(([a], [b]) => a - b).map(([, document]) => document)
  }

  /**
   * The next `limit` event numbers after `after`, ascending, that have a record or an audit
   * document: the union of each collection's first `limit`, each read from its event_no index.
   */
  async eventNumbersAfter(after: number, limit: number): Promise<number[]> {
    if (limit <= 0) return []
    const found = await Promise.all(
      [this.events, this.traces, this.datatrail, this.heartbeats, this.audits].map((collection) => firstEventNumbers(collection, after, limit))
    )
    return [...new Set(found.flat())].sort((a, b) => a - b).slice(0, limit)
  }
}

/**
 * The first `limit` distinct event numbers after `after` in one collection. Where an event has
 * several documents (datatrail members, heartbeats) a batch may hold fewer events than documents:
 * the next batch starts after the last event seen, so each batch adds at least one.
 */
async function firstEventNumbers(collection: Pick<Collection, 'find'>, after: number, limit: number): Promise<number[]> {
  const found: number[] = []
  let from = after
  while (found.length < limit) {
    const batch = await collection
      .find({ event_no: { $gt: from } }, { projection: { _id: 0, event_no: 1 }, sort: { event_no: 1 }, limit })
      .toArray()
    for (const document of batch) {
      const eventNo = numberIn(document.event_no, Number.NaN)
      if (Number.isNaN(eventNo) || eventNo === found.at(-1)) continue
      found.push(eventNo)
    }
    if (batch.length < limit) break
    const last = numberIn(batch.at(-1)!.event_no, Number.NaN)
    if (Number.isNaN(last) || last <= from) break
    from = last
  }
  return found.slice(0, limit)
}
