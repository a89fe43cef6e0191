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

/**
 * The storage port: the store's collections, the reads that span several of them, and the store's
 * own life. Routes and commands see only this; every query language lives in exactly one adapter.
 * Every operation may reject with StoreUnavailableError (the store cannot be used now; try later).
 */
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
  /** By name. */
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
  /**
   * One page in (event time, event_no) order, ascending or descending, an index range scan: each
   * event as `/v1/events` outputs it for the configured sites.
   */
  page(query: EventPageQuery): Promise<OutputRow[]>
}

export interface TraceCollection {
  /** Creates the trace with every key of the configured sites `incomplete` unless one exists. */
  create(eventNo: number, now: number): Promise<void>
  /**
   * Sets one key and bumps update_timestamp, creating the trace first when missing. When the stored
   * value changes, the transition `{key, from, to, at: now, by}` is recorded in the same atomic
   * write: no change without its transition, no transition without its change. Concurrent updates
   * of different keys never lose one. Resolves to whether the value changed.
   */
  setStatus(eventNo: number, key: string, status: WrittenStatus, now: number, by: string): Promise<boolean>
  find(eventNo: number): Promise<TraceRecord | null>
  /** The recorded transitions of one event's trace, oldest first: by `at`, then the order of writing. */
  history(eventNo: number): Promise<TransitionRecord[]>
  /**
   * Part of that history, in the same order: at most `limit` transitions after `after` (from the
   * first with null), and where the next part starts. A part costs the same at any depth. No total:
   * keeping a count beside the history cost every update-trace a page of its own (a WAL frame a
   * commit), and counting it per part is what made a deep part cost O(history).
   */
  historyPage(eventNo: number, after: HistoryPosition | null, limit: number): Promise<HistoryPage>
  /**
   * Adds transitions recorded elsewhere to the history of traces that exist, in the order given,
   * without changing the traces (bulk loading: the demo data). Resolves to how many were added.
   */
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
  /**
   * One event's heartbeats with a heartbeat_id above `afterId` (all with null), at most `limit`, by
   * heartbeat_id; how many the event has in all, and when the latest of them was stored (0: none).
   */
  page(eventNo: number, afterId: number | null, limit: number): Promise<HeartbeatPage>
}

/**
 * The one thing a server's first start may do to the data: give a store it created itself the demo
 * data set. Only such a store may receive it, never one that holds data of any kind: the demo's
 * events are numbered from 1 and would replace real ones.
 */
export interface FirstStart {
  /** Whether a server's start created this store and it still awaits its demo data (a quick look; seedDemo decides). */
  awaitsDemo(): Promise<boolean>
  /**
   * In one transaction, so that a start killed half way leaves the store as it was (and the next
   * start seeds it): when a server's start created this store and it still waits for its demo data,
   * ends the wait, and writes `load()` (heartbeats stored at `now`, seconds) unless the store holds
   * an event, trace, datatrail member or heartbeat by then. Of several instances starting on one new
   * store, one seeds.
   */
  seedDemo(load: () => BulkLoad, now: number): Promise<DemoSeeding>
}

/**
 * `seeded`; `holds-data`: the store was made for the demo but something wrote data into it first
 * (an import), so the demo was not written; `not-awaited`: the store was not created by a server's
 * start, was seeded already, or never receives a demo (MongoDB: the pipeline's own collections).
 */
export type DemoSeeding = 'seeded' | 'holds-data' | 'not-awaited'

/** Part of one event's history, and what is known of it all. */
export interface HistoryPage {
  transitions: TransitionRecord[]
  /** The position of the last transition of the part when more follow it; null at the end. */
  next: HistoryPosition | null
}

/** Part of one event's heartbeats, and what is known of them all. */
export interface HeartbeatPage {
  heartbeats: HeartbeatRecord[]
  total: number
  latestUpdate: number
}

/** Reads that join several collections. */
export interface StoreViews {
  /**
   * Everything stored of one event: from one snapshot where the store has snapshots. With
   * `heartbeatLimit`, only that many heartbeats (the lowest heartbeat_ids); `heartbeatTotal` counts them all.
   */
  eventParts(eventNo: number, options?: { heartbeatLimit?: number }): Promise<EventParts>
  /**
   * Events of the window whose actions ask for baseband data, strictly after `after`, ascending by
   * (event time, event_no), at most `limit`: each as its baseband-callback element, with its trace
   * as clients read it when there is one.
   */
  callbackPage(window: TimeWindow, after: EventPosition | undefined, limit: number): Promise<OutputRow[]>
  /**
   * The same events as callbackPage, each with its trace, datatrail members, heartbeats and
   * transitions: what the audit and stage latency read, in a few range scans a page.
   */
  windowPage(window: TimeWindow, after: EventPosition | undefined, limit: number): Promise<WindowEventParts[]>
}

/**
 * Every transition written through any instance sharing the store, in the order written: the
 * source of the live stream. A position is opaque to callers; it only moves forward.
 */
export interface TransitionFeed {
  /** Where the feed stands: transitions written from now on come after this position. */
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

/**
 * There is no store where the configuration points: a command that only reads (or changes what
 * exists) refuses to create one, so that a mistyped path is an error, not an empty all-clear.
 */
export class StoreMissingError extends Error {
  override name = 'StoreMissingError'
}

/**
 * The store's schema is older than this code's, and the process opened it only to read: it
 * refuses rather than upgrade a store it promised not to write.
 */
export class StoreOutdatedError extends Error {
  override name = 'StoreOutdatedError'
}

export { StoreUnavailableError } from '../store-unavailable.js'
