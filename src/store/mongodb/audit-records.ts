import type { Collection, Db, Document } from 'mongodb'
import type { EventRecords } from '../../domain/audit/kept-facts.js'
import { numberIn, plainDocument, WITHOUT_ID } from './documents.js'
import { toEvent } from './event-documents.js'
import { COLLECTIONS, HEARTBEAT_KINDS } from './indexes.js'
import { recordReads, type RecordReads } from './record-writes.js'
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
 * many an event has: the event, the trace with its history, the datatrail members (by event_no,
 * on the event_no indexes), and of each configured site the newest finished heartbeat and the
 * newest reporting an error (HEARTBEAT_KINDS): the only heartbeats factsOf keeps anything of, so
 * it makes the same facts of these as of all. The history is a field of the trace document, so it
 * comes with it. Not one snapshot: each document is read as it stands, which is why a write
 * recomputes after it lands (see audit-keeper.ts).
 */
export class AuditRecords {
  private readonly events: RecordReads
  private readonly traces: RecordReads
  private readonly datatrail: RecordReads
  private readonly heartbeats: RecordReads
  private readonly audits: Collection

  constructor(
    db: Db,
    private readonly sites: Sites
  ) {
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
    const one = async (collection: RecordReads) => {
      if (only === undefined) return collection.find(filter, WITHOUT_ID).toArray()
      const document = await collection.findOne(filter, WITHOUT_ID)
      return document === null ? [] : [document]
    }
    const [events, traces, members, heartbeats] = await Promise.all([
      one(this.events),
      one(this.traces),
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
    for (const document of traces) {
      const item = of(document)
      if (item === undefined) continue
      const { [HISTORY_FIELD]: history, ...trace } = plainDocument(document)
      item.trace = trace
      item.transitions = historyIn(history)
      item.any = true
    }
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
