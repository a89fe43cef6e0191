import type Database from 'better-sqlite3'
import type { EventRecords } from '../../domain/audit/kept-facts.js'
import type { EventRecord, TraceRecord } from '../../domain/records.js'
import { asksBaseband } from '../../domain/events.js'
import { CLASSIFICATION_KEY, STAGES, stageKey, type Sites } from '../../vocabulary.js'
import { EVENT_COLUMNS, toEvent, type EventRow } from './event-rows.js'

/** The stages of the transitions' `completion` column by its digit: written out, since a released migration's digits never change. */
const COMPLETION_DIGITS = ['baseband_callback_request', 'baseband_conversion', 'data_registration', 'data_replication_to_minoc'].map(
  (stage, index) => [`stages/${stage}/sites/`, String(index + 1)] as const
)

/** A key as the `completion` column writes it (migrations.ts; test/store/event-records.ts holds them alike); null for a key of no stage. */
export function completionOf(key: string): string | null {
  if (key === CLASSIFICATION_KEY) return '0'
  for (const [prefix, digit] of COMPLETION_DIGITS) if (key.startsWith(prefix)) return digit + key.slice(prefix.length)
  return null
}

/** Completions an event the scan of a batch may read; the events it did not read whole are sought a key at a time (docs/performance.md). */
const FIRST_COMPLETIONS_SCANNED = 40

const IN_LIST = 'IN (SELECT value FROM json_each(?))'

const LISTED = 'SELECT event_no FROM events WHERE baseband_requested = 1 AND event_no > @after'
const KEPT = 'SELECT event_no FROM audits WHERE event_no > @after'

/** What the bounded read runs, each an index search whatever an event holds (test/store/event-records.ts checks their plans). */
export const BOUNDED_READS = {
  events: `SELECT ${EVENT_COLUMNS} FROM events WHERE event_no ${IN_LIST}`,
  traces: `SELECT event_no, doc FROM traces WHERE event_no ${IN_LIST}`,
  datatrail: `SELECT event_no, member, doc FROM datatrail WHERE event_no ${IN_LIST} AND member ${IN_LIST} ORDER BY event_no, member`,
  heartbeats: `SELECT event_no, doc FROM heartbeats WHERE heartbeat_id IN (
      SELECT (SELECT heartbeat_id FROM heartbeats WHERE event_no = e.value AND finished_site = s.value ORDER BY heartbeat_id DESC LIMIT 1)
        FROM json_each(@events) AS e, json_each(@sites) AS s
      UNION
      SELECT (SELECT heartbeat_id FROM heartbeats WHERE event_no = e.value AND erring_site = s.value ORDER BY heartbeat_id DESC LIMIT 1)
        FROM json_each(@events) AS e, json_each(@sites) AS s)
    ORDER BY event_no, heartbeat_id`,
  // Every completion of the events, in the index's order: each (event, key)'s first is its first row.
  completions: `SELECT event_no, completion, at FROM transitions WHERE event_no IN (SELECT value FROM json_each(@events)) AND completion IS NOT NULL
    ORDER BY event_no, completion, at LIMIT @limit`,
  // @keys: an object from each key's completion (completionOf) to the key.
  firstCompletions: `SELECT e.value AS event_no, k.value AS key,
      (SELECT at FROM transitions WHERE event_no = e.value AND completion = k.key ORDER BY at LIMIT 1) AS at
    FROM json_each(@events) AS e, json_each(@keys) AS k`
} as const

/** Every record of the events: the reference the bounded read is held to in tests. */
const FULL_READS = {
  datatrail: `SELECT event_no, member, doc FROM datatrail WHERE event_no ${IN_LIST} ORDER BY event_no, member`,
  heartbeats: `SELECT event_no, doc FROM heartbeats WHERE event_no ${IN_LIST} ORDER BY event_no, heartbeat_id`,
  transitions: `SELECT event_no, key, "to", at FROM transitions WHERE event_no ${IN_LIST} ORDER BY event_no, at, seq`
} as const

type Row<T> = T & { event_no: number }

/** An event's records as the reader gives them: what factsOf reads, the whole event record among them. */
export interface StoredEventRecords extends EventRecords {
  event: EventRecord | null
  trace: TraceRecord | null
  datatrail: EventRecords['datatrail'][number][]
  heartbeats: { heartbeat: Record<string, unknown> }[]
  transitions: EventRecords['transitions'][number][]
}

/**
 * The records facts are made from, in a bounded number of index searches: the event, trace and sites'
 * datatrail members; each site's newest finished and erring heartbeat; each audited key's first
 * completion. factsOf keeps just these maxima and minima: the same facts as from all.
 */
export class EventRecordsReader {
  private readonly statements
  private readonly lists: { sites: string; members: string; keys: string }
  private readonly keyOfCompletion: ReadonlyMap<string, string>

  constructor(
    db: Database.Database,
    private readonly sites: Sites
  ) {
    const numbers = (select: string) => db.prepare<{ after: number; limit: number }, number>(`SELECT event_no FROM (${select}) ORDER BY event_no LIMIT @limit`).pluck()
    const audited = [CLASSIFICATION_KEY, ...sites.names.flatMap((site) => STAGES.map((stage) => stageKey(stage, site)))]
    this.keyOfCompletion = new Map(audited.map((key) => [completionOf(key)!, key]))
    this.lists = {
      sites: JSON.stringify(sites.names),
      members: JSON.stringify(sites.names.map((site) => sites.basebandKeyOf(site))),
      keys: JSON.stringify(Object.fromEntries(this.keyOfCompletion))
    }
    this.statements = {
      kept: numbers(KEPT),
      listedOrKept: numbers(`${LISTED} UNION ${KEPT}`),
      events: db.prepare<[string], EventRow>(BOUNDED_READS.events),
      traces: db.prepare<[string], Row<{ doc: string }>>(BOUNDED_READS.traces),
      datatrail: db.prepare<[string, string], Row<{ member: string; doc: string }>>(BOUNDED_READS.datatrail),
      heartbeats: db.prepare<{ events: string; sites: string }, Row<{ doc: string }>>(BOUNDED_READS.heartbeats),
      completions: db.prepare<{ events: string; limit: number }, Row<{ completion: string; at: number }>>(BOUNDED_READS.completions),
      firstCompletions: db.prepare<{ events: string; keys: string }, Row<{ key: string; at: number | null }>>(BOUNDED_READS.firstCompletions),
      allDatatrail: db.prepare<[string], Row<{ member: string; doc: string }>>(FULL_READS.datatrail),
      allHeartbeats: db.prepare<[string], Row<{ doc: string }>>(FULL_READS.heartbeats),
      allTransitions: db.prepare<[string], Row<{ key: string; to: string; at: number }>>(FULL_READS.transitions)
    }
  }

  /** The next `limit` numbers after `after` of events with a kept audit. */
  keptAfter(after: number, limit: number): number[] {
    return this.statements.kept.all({ after, limit })
  }

  /** The same, of events in the audit (asking for baseband data) or with a kept audit: what verification holds together. */
  listedOrKeptAfter(after: number, limit: number): number[] {
    return this.statements.listedOrKept.all({ after, limit })
  }

  /** What factsOf needs of each event's records, in the order given; the caller's transaction makes them one snapshot. */
  of(eventNos: readonly number[]): Map<number, StoredEventRecords> {
    const { records, list } = this.gather(eventNos)
    if (list === null) return records
    const { statements, lists } = this
    for (const row of statements.datatrail.all(list, lists.members)) records.get(row.event_no)!.datatrail.push(memberOf(row))
    for (const row of statements.heartbeats.all({ events: list, sites: lists.sites })) records.get(row.event_no)!.heartbeats.push(heartbeatOf(row))
    this.addFirstCompletions(records, eventNos, list)
    return records
  }

  /** Each audited key's first completion: of a batch, from one scan for the events it read whole; of the rest, by a seek a key. */
  private addFirstCompletions(records: Map<number, StoredEventRecords>, eventNos: readonly number[], list: string): void {
    const { statements, keyOfCompletion } = this
    const limit = eventNos.length > 1 ? FIRST_COMPLETIONS_SCANNED * eventNos.length : 0
    const rows = limit > 0 ? statements.completions.all({ events: list, limit }) : []
    // Cut short, the scan read whole every event before the last it reached; not run, none.
    const cutAt = limit === 0 ? Number.NEGATIVE_INFINITY : rows.length < limit ? Number.POSITIVE_INFINITY : rows.at(-1)!.event_no
    let previous: Row<{ completion: string; at: number }> | undefined
    for (const row of rows) {
      if (row.event_no >= cutAt) break
      const first = previous?.event_no !== row.event_no || previous.completion !== row.completion
      previous = row
      const key = keyOfCompletion.get(row.completion)
      if (first && key !== undefined) records.get(row.event_no)!.transitions.push({ key, to: 'complete', at: row.at })
    }
    const rest = eventNos.filter((eventNo) => eventNo >= cutAt)
    if (rest.length === 0) return
    for (const row of statements.firstCompletions.all({ events: JSON.stringify(rest), keys: this.lists.keys })) {
      if (row.at !== null) records.get(row.event_no)!.transitions.push({ key: row.key, to: 'complete', at: row.at })
    }
  }

  /** Every record of each event: the reference `of` must reduce like (tests only). */
  everythingOf(eventNos: readonly number[]): Map<number, StoredEventRecords> {
    const { records, list } = this.gather(eventNos)
    if (list === null) return records
    const { statements } = this
    for (const row of statements.allDatatrail.all(list)) records.get(row.event_no)!.datatrail.push(memberOf(row))
    for (const row of statements.allHeartbeats.all(list)) records.get(row.event_no)!.heartbeats.push(heartbeatOf(row))
    for (const row of statements.allTransitions.all(list)) records.get(row.event_no)!.transitions.push({ key: row.key, to: row.to, at: row.at })
    return records
  }

  /** The event and trace of each event (one row each), and the list parameter for the other reads; null when there are no events. */
  private gather(eventNos: readonly number[]): { records: Map<number, StoredEventRecords>; list: string | null } {
    const records = new Map<number, StoredEventRecords>()
    for (const eventNo of eventNos) records.set(eventNo, { event: null, trace: null, datatrail: [], heartbeats: [], transitions: [] })
    if (eventNos.length === 0) return { records, list: null }
    const list = JSON.stringify(eventNos)
    // The baseband flag is made from the actions, as a write makes it: the kept column is held to this, not the reverse.
    for (const row of this.statements.events.all(list)) {
      const event = toEvent(row)
      records.get(row.event_no)!.event = { ...event, baseband_requested: asksBaseband(event.actions, this.sites) }
    }
    for (const row of this.statements.traces.all(list)) records.get(row.event_no)!.trace = JSON.parse(row.doc) as TraceRecord
    return { records, list }
  }
}

const memberOf = (row: { member: string; doc: string }) => ({ member: row.member, value: JSON.parse(row.doc) as Record<string, unknown> })
const heartbeatOf = (row: { doc: string }) => ({ heartbeat: JSON.parse(row.doc) as Record<string, unknown> })
