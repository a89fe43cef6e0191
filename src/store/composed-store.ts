import type { Role } from '../../schemas/auth.js'
import type { HeartbeatInput } from '../../schemas/heartbeats.js'
import type { TimeWindow } from '../domain/time-window.js'
import type { StoredTrace } from '../domain/trace.js'
import type {
  CallbackRow,
  EventListQuery,
  EventParts,
  EventPosition,
  NewUser,
  Store,
  StoredDatatrail,
  StoredEvent,
  StoredHeartbeat,
  UserRecord
} from './port.js'

/** SQLite answers synchronously, MongoDB with promises: a collection may do either. */
type Awaitable<T> = T | Promise<T>

export interface UserCollection {
  create(user: NewUser): Awaitable<boolean>
  find(name: string): Awaitable<UserRecord | null>
  list(): Awaitable<UserRecord[]>
  count(): Awaitable<number>
  setRole(name: string, role: Role): Awaitable<boolean>
  setPasswordHash(name: string, passwordHash: string): Awaitable<boolean>
  remove(name: string): Awaitable<boolean>
  saveRefreshToken(name: string, tokenHash: string, expiresAt: number): Awaitable<boolean>
}

export interface EventCollection {
  upsert(events: StoredEvent[]): Awaitable<number>
  find(eventNo: number): Awaitable<StoredEvent | null>
  list(query: EventListQuery): Awaitable<StoredEvent[]>
  callbackPage(window: TimeWindow, after: EventPosition | undefined, limit: number): Awaitable<CallbackRow[]>
}

export interface TraceCollection {
  create(eventNo: number, initial: Record<string, string>, now: number): Awaitable<void>
  setStatus(eventNo: number, key: string, status: string, initial: Record<string, string>, now: number): Awaitable<void>
  find(eventNo: number): Awaitable<StoredTrace | null>
  upsert(traces: StoredTrace[]): Awaitable<number>
}

export interface EventPartCollections {
  putDatatrail(items: StoredDatatrail[]): Awaitable<void>
  datatrailOf(eventNo: number): Awaitable<StoredDatatrail[]>
  addHeartbeats(heartbeats: HeartbeatInput[], now: number): Awaitable<number>
  heartbeatsOf(eventNo: number): Awaitable<StoredHeartbeat[]>
}

export interface Collections {
  users: UserCollection
  events: EventCollection
  traces: TraceCollection
  parts: EventPartCollections
}

/**
 * The port over an adapter's collections: every operation goes through the adapter's `run`, which
 * turns its "unavailable" errors into StoreUnavailableError. Adapters add what differs between them:
 * ping, close, and how the parts of one event are read together. An adapter that gets a new
 * connection replaces `collections`; operations read them afresh each time.
 */
export abstract class ComposedStore implements Store {
  abstract readonly kind: Store['kind']
  abstract ping(): Promise<void>
  abstract close(): Promise<void>
  abstract eventParts(eventNo: number): Promise<EventParts>
  protected abstract run<T>(work: () => Awaitable<T>): Promise<T>

  constructor(protected collections: Collections) {}

  createUser(user: NewUser) {
    return this.run(() => this.collections.users.create(user))
  }
  findUser(name: string) {
    return this.run(() => this.collections.users.find(name))
  }
  listUsers() {
    return this.run(() => this.collections.users.list())
  }
  countUsers() {
    return this.run(() => this.collections.users.count())
  }
  setRole(name: string, role: Role) {
    return this.run(() => this.collections.users.setRole(name, role))
  }
  setPasswordHash(name: string, passwordHash: string) {
    return this.run(() => this.collections.users.setPasswordHash(name, passwordHash))
  }
  removeUser(name: string) {
    return this.run(() => this.collections.users.remove(name))
  }
  saveRefreshToken(name: string, tokenHash: string, expiresAt: number) {
    return this.run(() => this.collections.users.saveRefreshToken(name, tokenHash, expiresAt))
  }

  upsertEvents(events: StoredEvent[]) {
    return this.run(() => this.collections.events.upsert(events))
  }
  findEvent(eventNo: number) {
    return this.run(() => this.collections.events.find(eventNo))
  }
  listEvents(query: EventListQuery) {
    return this.run(() => this.collections.events.list(query))
  }

  /** Keyset pages: each page continues after the last event of the previous one. */
  async *basebandCallbacks(window: TimeWindow, pageSize: number): AsyncIterable<CallbackRow[]> {
    let after: EventPosition | undefined
    for (;;) {
      const page = await this.run(() => this.collections.events.callbackPage(window, after, pageSize))
      if (page.length > 0) yield page
      if (page.length < pageSize) return
      const last = page[page.length - 1]!.event
      after = { timestamp: last.timestamp, event_no: last.event_no }
    }
  }

  createTrace(eventNo: number, initial: Record<string, string>, now: number) {
    return this.run(() => this.collections.traces.create(eventNo, initial, now))
  }
  setTraceStatus(eventNo: number, key: string, status: string, initial: Record<string, string>, now: number) {
    return this.run(() => this.collections.traces.setStatus(eventNo, key, status, initial, now))
  }
  findTrace(eventNo: number) {
    return this.run(() => this.collections.traces.find(eventNo))
  }
  upsertTraces(traces: StoredTrace[]) {
    return this.run(() => this.collections.traces.upsert(traces))
  }

  putDatatrail(items: StoredDatatrail[]) {
    return this.run(() => this.collections.parts.putDatatrail(items))
  }
  addHeartbeats(heartbeats: HeartbeatInput[], now: number) {
    return this.run(() => this.collections.parts.addHeartbeats(heartbeats, now))
  }
}
