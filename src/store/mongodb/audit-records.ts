import type { Collection, Db, Document } from 'mongodb'
import type { EventRecords } from '../../domain/audit/kept-facts.js'
import { documentsOf, numberIn, plainDocument, toEvent, WITHOUT_ID } from './documents.js'
import { COLLECTIONS, HEARTBEAT_KINDS } from './indexes.js'
import { completionsIn, HISTORY_FIELD, historyIn, SUMMARY_CHECK, SUMMARY_FIELD, summaryIn } from './history-summary.js'
import { recordReads, type HistorySummaryWrites, type RecordReads } from './record-writes.js'
import type { Sites } from '../../vocabulary.js'

/** Everything stored of one event as factsOf reads it, and whether anything is stored at all. */
interface StoredRecords extends EventRecords {
  datatrail: { member: string; value: Record<string, unknown> }[]
  heartbeats: { heartbeat: Record<string, unknown> }[]
  any: boolean
}

/** Of a heartbeat, only what applyHeartbeat reads. */
const HEARTBEAT_FACTS = { _id: 0, event_no: 1, heartbeat_id: 1, site: 1, 'sent.error': 1, 'received.finished_time': 1, 'received.total_data_files': 1 } as const

const none = (): StoredRecords => ({ event: null, trace: null, datatrail: [], heartbeats: [], transitions: [], any: false })

/**
 * Reads what events' facts are made from, a bounded number of documents however many an event has: the event, the
 * datatrail, of each site the newest finished and erring heartbeat (HEARTBEAT_KINDS), and of the trace its audited keys
 * and history's summary. Not one snapshot, so a write recomputes after it lands (the keeper's `keep`). A summary out of
 * step or missing is made here from the whole history, not by a migration at start: the shared trace collection may
 * hold years of histories, another program can put one out of step any time, and the verifier reads every event hourly.
 */
export class AuditRecords {
  private readonly events: RecordReads
  private readonly traces: RecordReads
  private readonly datatrail: RecordReads
  private readonly heartbeats: RecordReads
  private readonly audits: Collection

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

  async of(eventNos: readonly number[]): Promise<Map<number, StoredRecords>> {
    const records = new Map(eventNos.map((eventNo) => [eventNo, none()]))
    if (eventNos.length === 0) return records
    const membersFilter = eventNos.length === 1 ? { event_no: eventNos[0] } : { event_no: { $in: [...eventNos] } }
    const [events, traces, members, heartbeats] = await Promise.all([
      documentsOf(this.events, eventNos, WITHOUT_ID),
      documentsOf(this.traces, eventNos, { projection: this.traceFacts }),
      this.datatrail.find(membersFilter, { ...WITHOUT_ID, sort: { event_no: 1, member: 1 } }).toArray(),
      Promise.all(eventNos.map((eventNo) => this.newestHeartbeats(eventNo))).then((found) => found.flat())
    ])
    const each = (documents: Document[], read: (item: StoredRecords, document: Document) => void) => {
      for (const document of documents) {
        const item = records.get(numberIn(document.event_no, Number.NaN))
        if (item === undefined) continue
        read(item, document)
        item.any = true
      }
    }
    each(events, (item, document) => (item.event = toEvent(document)))
    const outOfStep: number[] = []
    each(traces, (item, document) => {
      const { [HISTORY_FIELD]: _last, [SUMMARY_FIELD]: _summary, ...trace } = plainDocument(document)
      item.trace = trace
      const summary = summaryIn(document)
      if (summary === undefined) outOfStep.push(numberIn(document.event_no, Number.NaN))
      else item.transitions = completionsIn(summary)
    })
    if (outOfStep.length > 0) await this.fromWholeHistories(outOfStep, records)
    each(members, (item, document) => {
      const { member, value } = plainDocument(document)
      item.datatrail.push({ member: String(member), value: (value ?? {}) as Record<string, unknown> })
    })
    each(heartbeats, (item, document) => item.heartbeats.push({ heartbeat: plainDocument(document) }))
    return records
  }

  /** The transitions of traces whose summary is out of step, from their whole histories, and their summaries made again. */
  private async fromWholeHistories(eventNos: readonly number[], records: Map<number, StoredRecords>): Promise<void> {
    const documents = await documentsOf(this.traces, eventNos, { projection: { _id: 0, event_no: 1, [HISTORY_FIELD]: 1, [SUMMARY_FIELD]: 1 } })
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

  /** The next `limit` event numbers after `after` with a record or an audit document: the union of each collection's first `limit`. */
  async eventNumbersAfter(after: number, limit: number): Promise<number[]> {
    if (limit <= 0) return []
    const found = await Promise.all(
      [this.events, this.traces, this.datatrail, this.heartbeats, this.audits].map((collection) => firstEventNumbers(collection, after, limit))
    )
    return [...new Set(found.flat())].sort((a, b) => a - b).slice(0, limit)
  }
}

/** The first `limit` distinct event numbers after `after` in one collection; where an event has several documents, in several batches. */
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
