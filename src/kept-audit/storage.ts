import type { VerdictChange } from '../../schemas/audit.js'
import type { Maybe } from '../maybe.js'
import type { EventRecords, KeptFacts } from '../domain/audit/kept-facts.js'
import type { KeptLook } from '../domain/audit/kept-look.js'
import type { WindowEntry } from '../domain/audit/kept-report.js'
import type { EventPosition } from '../domain/records.js'
import type { TimeWindow } from '../domain/time-window.js'
import type { KeptWrite } from './keeping.js'
import type { KeptRow } from './kept-check.js'

/** A column a store keeps in a record table beside what it is made from (SQLite). */
export type KeptColumn = 'events.output' | 'events.callback_head' | 'events.baseband_requested' | 'traces.output' | 'record_counts.heartbeat_count'

export interface KeptColumnRepair {
  event_no: number
  column: KeptColumn
}

/** Named here too for the adapters that give this storage. */
export type { Maybe }

/** What could not be read of one event (text that is not JSON, a value of the wrong shape), and why. */
export interface Unreadable {
  error: string
}

/** What a conditional write of a kept row must find still there: opaque to the keeper. */
export interface Held {
  /** Whether there was a row when it was read (a row may be there without a revision). */
  existed: boolean
  rev: unknown
}

/** A kept row as read for a look at it again: its facts and look, the clock the look was made at. */
export interface LookedRow extends Held {
  facts: KeptFacts
  /** The facts' JSON text, where the store keeps them as text: the same text as the facts made again means the same facts. */
  factsText?: string
  look: KeptLook
  /** Null for a row kept before looks carried their clock. */
  looked_at: number | null
}

export type ServedRow = LookedRow & KeptRow

/** A row that could not be read, with what a write that replaces it must find. */
export type UnreadableRow = Unreadable & Held

/** The kept rows and the records of some events, read so that the rows are no newer than the records. */
export interface KeptRead {
  rows: Map<number, ServedRow | UnreadableRow>
  records: Map<number, EventRecords | Unreadable>
}

/** A window's row that could not be read, with what places it in the window. */
export type UnreadableWindowRow = Unreadable & { event_no: number; event_time: number }

/** A window's row as the adapter hands it over: the entry itself, or what a report made again needs. */
export type WindowRow = WindowEntry | UnreadableWindowRow

export const isUnreadableWindowRow = (row: WindowRow): row is UnreadableWindowRow => 'error' in row

/** One write of a kept row, conditional on `held`: the facts made again (`made`), or only a new look, with its verdict change. */
export type RowWrite = { event_no: number; held: Held } & ({ made: KeptWrite } | { look: KeptLook; change: VerdictChange | null })

/** What each adapter gives the keeper: reads and conditional writes, no decision. */
export interface KeptStorage {
  /** Whether a row is kept of every event with a record (MongoDB) or only of those in the audit (SQLite). */
  readonly keepsEveryEvent: boolean
  rows(eventNos: readonly number[]): Maybe<Map<number, LookedRow | UnreadableRow>>
  /** The rows and the records of these events: in one snapshot, or the rows first (then a write that lands between is in the records). */
  read(eventNos: readonly number[]): Maybe<KeptRead>
  records(eventNos: readonly number[]): Maybe<Map<number, EventRecords | Unreadable>>
  /** Each write whose row is still as read, at `now` (ms); resolves to the events whose row changed meanwhile. */
  write(writes: readonly RowWrite[], now: number): Maybe<number[]>
  /** Takes an event out of the due index: a row whose records cannot be read would come first at every deadline check. */
  setAside(eventNo: number): Maybe<void>
  windowRows(window: TimeWindow, after: EventPosition | undefined, limit: number): Maybe<WindowRow[]>
  /** Events whose look was made at a clock later than `at`, latest first. */
  lookedAfter(at: number, limit: number): Maybe<number[]>
  /** Events whose next deadline is at or before `now`, earliest first. */
  dueBy(now: number, limit: number): Maybe<number[]>
  /** The next event numbers after `after`, ascending: every event that should have a kept row, and every event that has one. */
  auditedAfter(after: number, limit: number): Maybe<number[]>
  /** About how many rows are kept (an estimate is enough). */
  size(): Maybe<number>
  /** The kept columns of these events' records held against the records, each that differs repaired unless `repair` is false. */
  columnsOf(eventNos: readonly number[], repair: boolean): Maybe<KeptColumnRepair[]>
  /** The same for every event numbered above `after` and up to `upTo`, repaired; the output texts and baseband flag only with `texts`. */
  columnsIn(after: number, upTo: number, texts: boolean): Maybe<KeptColumnRepair[]>
  marked(limit: number): Maybe<{ eventNos: number[]; upTo: number }>
  unmark(upTo: number): Maybe<void>
}
