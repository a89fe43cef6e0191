import type { Role } from '../../schemas/auth.js'
import type { Actions } from '../../schemas/events.js'
import type { HeartbeatInput } from '../../schemas/heartbeats.js'
import type { TimeWindow } from '../domain/time-window.js'
import type { StoredTrace } from '../domain/trace.js'

/** A user as the store keeps it. Times are milliseconds since the epoch. */
export interface UserRecord {
  name: string
  passwordHash: string
  role: Role
  createdAt: number
  /** SHA-256 (hex) of the user's current refresh token; null until the first login. */
  refreshTokenHash: string | null
  refreshTokenExpiresAt: number | null
}

export type NewUser = Pick<UserRecord, 'name' | 'passwordHash' | 'role' | 'createdAt'>

/** An event as stored. `timestamp` is the event time in ms; `update_timestamp` the write time in s. */
export interface StoredEvent {
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

/** A position in (event time, event_no) order; pages continue strictly after (or before) it. */
export interface EventPosition {
  timestamp: number
  event_no: number
}

export interface EventListQuery {
  window: TimeWindow
  order: 'asc' | 'desc'
  limit: number
  after?: EventPosition
  minSnr?: number
  maxSnr?: number
  knownSourceName?: string
  basebandRequested?: boolean
}

/** A row of the baseband-callback scan: only what the route outputs, read in bulk. */
export interface CallbackRow {
  event: Pick<StoredEvent, 'event_no' | 'timestamp' | 'snr' | 'known_source_name'>
  trace: StoredTrace | null
}

/** One member of an event's datatrail as written (normally the six fields of the contract). */
export interface StoredDatatrail {
  event_no: number
  member: string
  value: Record<string, unknown>
  update_timestamp: number
}

export interface StoredHeartbeat {
  record: HeartbeatInput
  update_timestamp: number
}

/** Everything the service knows of one event, from every collection. */
export interface EventParts {
  event: StoredEvent | null
  trace: StoredTrace | null
  datatrail: StoredDatatrail[]
  heartbeats: StoredHeartbeat[]
}

/**
 * The storage port. Routes and commands see only this interface; every query language lives in
 * exactly one adapter. All methods may reject with StoreUnavailableError.
 */
export interface Store {
  readonly kind: 'sqlite' | 'mongodb'
  /** Resolves when the store answers; rejects with StoreUnavailableError otherwise. */
  ping(): Promise<void>
  close(): Promise<void>

  /** False when a user of that name exists already. */
  createUser(user: NewUser): Promise<boolean>
  findUser(name: string): Promise<UserRecord | null>
  listUsers(): Promise<UserRecord[]>
  countUsers(): Promise<number>
  /** The following return false when there is no such user. */
  setRole(name: string, role: Role): Promise<boolean>
  /** Also drops the user's refresh token: a new password ends the old sessions' refreshes. */
  setPasswordHash(name: string, passwordHash: string): Promise<boolean>
  removeUser(name: string): Promise<boolean>
  /** Replaces the user's refresh token, so the previous one stops working. */
  saveRefreshToken(name: string, tokenHash: string, expiresAt: number): Promise<boolean>

  /** Inserts or replaces events by event_no, all in one transaction; resolves to their number. */
  upsertEvents(events: StoredEvent[]): Promise<number>
  findEvent(eventNo: number): Promise<StoredEvent | null>
  /** One page in (event time, event_no) order, ascending or descending: an index range scan. */
  listEvents(query: EventListQuery): Promise<StoredEvent[]>
  /**
   * Events in the window whose actions ask for baseband data, with their traces, ascending by
   * (event time, event_no), in pages of at most `pageSize`: only one page is held at a time.
   */
  basebandCallbacks(window: TimeWindow, pageSize: number): AsyncIterable<CallbackRow[]>

  /** Creates the trace from `initial` unless one exists: idempotent. */
  createTrace(eventNo: number, initial: Record<string, string>, now: number): Promise<void>
  /**
   * Sets one key and bumps update_timestamp in one atomic operation, creating the trace from
   * `initial` first when missing. Concurrent updates of different keys never lose one.
   */
  setTraceStatus(eventNo: number, key: string, status: string, initial: Record<string, string>, now: number): Promise<void>
  findTrace(eventNo: number): Promise<StoredTrace | null>
  /** Inserts or replaces whole trace documents (bulk loading); one transaction. */
  upsertTraces(traces: StoredTrace[]): Promise<number>

  /** Inserts or replaces datatrail members by (event_no, member); one transaction. */
  putDatatrail(items: StoredDatatrail[]): Promise<void>
  /** Inserts heartbeats; a heartbeat_id already stored is left as it is. Resolves to the number new. */
  addHeartbeats(heartbeats: HeartbeatInput[], now: number): Promise<number>

  eventParts(eventNo: number): Promise<EventParts>
}

/** The store cannot be reached or is locked: the request may succeed later (503, not 500). */
export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError'
}
