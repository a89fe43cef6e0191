import type { Role } from '../../schemas/auth.js'
import type { HeartbeatInput } from '../../schemas/heartbeats.js'
import type {
  BulkLoad,
  DatatrailRecord,
  EventPageQuery,
  EventParts,
  EventPosition,
  EventRecord,
  FeedTransition,
  HeartbeatRecord,
  HistoryPosition,
  NewUserRecord,
  OutputRow,
  TraceRecord,
  TransitionRecord,
  UserRecord,
  WindowEventParts
} from '../domain/records.js'
import type { VerdictChange } from '../../schemas/audit.js'
import type { AuditCollection } from '../kept-audit/keeper.js'
import type { KeptAuditState } from '../kept-audit/rebuild.js'
import type { TimeWindow } from '../domain/time-window.js'
import type { WrittenStatus } from '../vocabulary.js'

/** The storage port, all routes and commands see. Every operation may reject with StoreUnavailableError (try later). */
export interface Store {
  readonly kind: 'sqlite' | 'mongodb'
  readonly users: UserCollection
  readonly events: EventCollection
  readonly traces: TraceCollection
  readonly datatrail: DatatrailCollection
  readonly heartbeats: HeartbeatCollection
  readonly views: StoreViews
  readonly transitions: TransitionFeed
  /** The kept audit (src/kept-audit/): found, read a window at a time, kept, checked. */
  readonly audits: AuditCollection
  readonly verdictChanges: VerdictFeed
  readonly firstStart: FirstStart
  /** Whether the kept audit agrees with this process's configuration, or how far making it again has come. */
  readonly keptAudit: KeptAuditState
  /** Resolves when the store can take a write now. */
  ping(): Promise<void>
  close(): Promise<void>
  /** Reports every operation's duration and outcome from now on to `observer`, besides any observer before it. */
  observe(observer: StoreObserver): void
}

export interface UserCollection {
  /** False when a user of that name exists already. */
  create(user: NewUserRecord): Promise<boolean>
  find(name: string): Promise<UserRecord | null>
  list(): Promise<UserRecord[]>
  count(): Promise<number>
  /** This and the following resolve to false when there is no such user. */
  setRole(name: string, role: Role): Promise<boolean>
  /** Also drops the user's refresh token: a new password ends the old sessions' refreshes. */
  setPasswordHash(name: string, passwordHash: string): Promise<boolean>
  remove(name: string): Promise<boolean>
  /** Replaces the user's refresh token, so the previous one stops working. */
  saveRefreshToken(name: string, tokenHash: string, expiresAt: number): Promise<boolean>
}

export interface EventCollection {
  /** Inserts or replaces events by event_no, all in one transaction; resolves to their number. */
  upsert(events: readonly EventRecord[]): Promise<number>
  find(eventNo: number): Promise<EventRecord | null>
  /** The events of these numbers that are stored, each once, in no particular order: one read, not one a number. */
  findMany(eventNos: readonly number[]): Promise<EventRecord[]>
  /** One page in (event time, event_no) order, an index range scan: each event as `/v1/events` outputs it. */
  page(query: EventPageQuery): Promise<OutputRow[]>
}

export interface TraceCollection {
  /** Creates the trace with every key of the configured sites `incomplete` unless one exists. */
  create(eventNo: number, now: number): Promise<void>
  /**
   * Sets one key and bumps update_timestamp, creating the trace when missing; a change records its transition in the same
   * atomic write, and concurrent updates of different keys never lose one. Resolves to whether the value changed.
   */
  setStatus(eventNo: number, key: string, status: WrittenStatus, now: number, by: string): Promise<boolean>
  find(eventNo: number): Promise<TraceRecord | null>
  /** The recorded transitions of one event's trace, oldest first: by `at`, then the order of writing. */
  history(eventNo: number): Promise<TransitionRecord[]>
  /** At most `limit` transitions after `after` (null: from the first). No total: kept, it cost each write a WAL frame; counted, O(history). */
  historyPage(eventNo: number, after: HistoryPosition | null, limit: number): Promise<HistoryPage>
  /** Adds transitions recorded elsewhere to existing traces' history, changing no trace (bulk loading); resolves to how many. */
  record(transitions: readonly FeedTransition[]): Promise<number>
  /** Inserts or replaces whole trace documents (bulk loading); one transaction. */
  upsert(traces: readonly TraceRecord[]): Promise<number>
}

export interface DatatrailCollection {
  /** Inserts or replaces members by (event_no, member); one transaction. */
  put(members: readonly DatatrailRecord[]): Promise<void>
}

export interface HeartbeatCollection {
  /** Inserts heartbeats; a heartbeat_id already stored is left as it is. Resolves to the number new. */
  add(heartbeats: readonly HeartbeatInput[], now: number): Promise<number>
  /** One event's heartbeats with a heartbeat_id above `afterId` (null: all), at most `limit`, by heartbeat_id. */
  page(eventNo: number, afterId: number | null, limit: number): Promise<HeartbeatPage>
}

/** The demo data set, only ever for a store a server's start created: its events are numbered from 1 and would replace real ones. */
export interface FirstStart {
  /** Whether a server's start created this store and it still awaits its demo data (a quick look; seedDemo decides). */
  awaitsDemo(): Promise<boolean>
  /**
   * In one transaction, so a start killed half way leaves the store as it was: ends the wait, and writes `load()` (heartbeats
   * stored at `now`, s) unless the store holds a record by then. Of several instances starting on one new store, one seeds.
   */
  seedDemo(load: () => BulkLoad, now: number): Promise<DemoSeeding>
}

/** `holds-data`: something (an import) wrote first; `not-awaited`: not made by a server's start, seeded already, or never seeded (MongoDB). */
export type DemoSeeding = 'seeded' | 'holds-data' | 'not-awaited'

export interface HistoryPage {
  transitions: TransitionRecord[]
  /** The position of the last transition of the part when more follow it; null at the end. */
  next: HistoryPosition | null
}

/** Part of one event's heartbeats, how many it has in all, and when the latest was stored (0: none). */
export interface HeartbeatPage {
  heartbeats: HeartbeatRecord[]
  total: number
  latestUpdate: number
}

export interface StoreViews {
  /** Everything stored of one event, from one snapshot where the store has them; `heartbeatLimit` keeps the lowest heartbeat_ids. */
  eventParts(eventNo: number, options?: { heartbeatLimit?: number }): Promise<EventParts>
  /** The window's events that ask for baseband data, strictly after `after` by (event time, event_no): each as its baseband-callback element. */
  callbackPage(window: TimeWindow, after: EventPosition | undefined, limit: number): Promise<OutputRow[]>
  /** The same events as callbackPage with the records the audit and stage latency read, in a few range scans a page. */
  windowPage(window: TimeWindow, after: EventPosition | undefined, limit: number): Promise<WindowEventParts[]>
}

/** Every transition written through any instance sharing the store, in the order written; a position is opaque and only moves forward. */
export interface TransitionFeed {
  /** Transitions written from now on come after this position. */
  position(): Promise<number>
  /** Transitions written after `position`, in the order written, at most `limit`, and the position after them. */
  since(position: number, limit: number): Promise<FeedPage>
}

export interface FeedPage {
  transitions: FeedTransition[]
  position: number
}

/** Every verdict change recorded through any instance sharing the store, in the order written; positions as in TransitionFeed. */
export interface VerdictFeed {
  position(): Promise<number>
  since(position: number, limit: number): Promise<{ items: VerdictChange[]; position: number }>
}

/** Told of every store operation: its name (`users.find`, `ping`), duration and outcome (with the error, as the port throws it, when it failed). */
export type StoreObserver = (operation: string, seconds: number, ok: boolean, error?: unknown) => void

/** No store where the configuration points, for a command that must not create one: a mistyped path is an error, not an empty all-clear. */
export class StoreMissingError extends Error {
  override name = 'StoreMissingError'
}

/** The store's schema is older than this code's, and a process that opened it only to read will not upgrade it. */
export class StoreOutdatedError extends Error {
  override name = 'StoreOutdatedError'
}

export { StoreUnavailableError } from '../store-unavailable.js'
