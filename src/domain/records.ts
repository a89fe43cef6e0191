import type { Role } from '../../schemas/auth.js'
import type { Actions } from '../../schemas/events.js'
import type { HeartbeatInput } from '../../schemas/heartbeats.js'
import type { StreamedTransition, Transition } from '../../schemas/history.js'
import type { TimeWindow } from './time-window.js'

// The records the store keeps, named as the pipeline's documents and the wire name them. Times:
// `timestamp` an event time in ms; `update_timestamp` a write time in s, as the pipeline writes it.

export interface UserRecord {
  name: string
  password_hash: string
  role: Role
  created_at: number
  /** SHA-256 (hex) of the user's current refresh token; null until the first login. */
  refresh_token_hash: string | null
  refresh_token_expires_at: number | null
}

export type NewUserRecord = Pick<UserRecord, 'name' | 'password_hash' | 'role' | 'created_at'>

export interface EventRecord {
  event_no: number
  timestamp: number
  snr: number
  dm: number | null
  known_source_name: string
  tsar_classification: string | null
  actions: Actions
  /** Derived from actions.want when written: baseband data asked for at any site. */
  baseband_requested: boolean
  update_timestamp: number
}

/** A trace as stored: flat slash keys (the pipeline's MongoDB shape), whatever else a writer added. */
export type TraceRecord = Record<string, unknown>

/** One member of an event's datatrail as written (normally the six fields of the interface). */
export interface DatatrailRecord {
  event_no: number
  member: string
  value: Record<string, unknown>
  update_timestamp: number
}

export interface HeartbeatRecord {
  heartbeat: HeartbeatInput
  update_timestamp: number
}

/** One change of a stored trace value made through update-trace: `from` as stored before (null: none), `at` in s. */
export type TransitionRecord = Transition

export type FeedTransition = StreamedTransition

/** Records of every kind written together in bulk (the demo data set). */
export interface BulkLoad {
  events: EventRecord[]
  traces: TraceRecord[]
  datatrail: DatatrailRecord[]
  heartbeats: HeartbeatInput[]
  /** The history of the traces, each transition after its trace. */
  transitions: FeedTransition[]
}

export interface EventParts {
  event: EventRecord | null
  trace: TraceRecord | null
  datatrail: DatatrailRecord[]
  heartbeats: HeartbeatRecord[]
  /** The event's heartbeats in all, of which `heartbeats` may be the first few. */
  heartbeatTotal: number
  /** When the latest of all the event's heartbeats was stored (0: none), shown or not. */
  heartbeatsUpdated: number
}

/** A position in (event time, event_no) order; pages continue strictly after (or before) it. */
export interface EventPosition {
  timestamp: number
  event_no: number
}

/** A place in one event's history: a transition's `at`, and its place in the order of writing (SQLite's seq, MongoDB's array index). */
export interface HistoryPosition {
  at: number
  written: number
}

export interface EventPageQuery {
  window: TimeWindow
  order: 'asc' | 'desc'
  limit: number
  after?: EventPosition
  minSnr?: number
  maxSnr?: number
  knownSourceName?: string
  basebandRequested?: boolean
}

/** One event of a window with the records its facts and stage latency are made from, in a bounded number of index searches. */
export interface WindowEventParts {
  event: EventRecord
  trace: TraceRecord | null
  datatrail: readonly { member: string; value: Record<string, unknown> }[]
  /** Of each configured site, the newest finished heartbeat and the newest reporting an error. */
  heartbeats: readonly { heartbeat: Record<string, unknown> }[]
  /** Transitions holding each audited key's first to `complete` (what factsOf keeps); usually only those. */
  transitions: readonly { key: string; to: unknown; at: number }[]
}

/** A row of a window read: its place, where the next page continues, and the element's JSON text, ready to send. */
export interface OutputRow {
  position: EventPosition
  json: string
}
