import type Database from 'better-sqlite3'
import type { Role } from '../../../schemas/auth.js'
import type { HeartbeatInput } from '../../../schemas/heartbeats.js'
import type { TimeWindow } from '../../domain/time-window.js'
import type { StoredTrace } from '../../domain/trace.js'
import {
  StoreUnavailableError,
  type CallbackRow,
  type EventListQuery,
  type EventParts,
  type EventPosition,
  type NewUser,
  type Store,
  type StoredDatatrail,
  type StoredEvent
} from '../port.js'
import { asStoreError, openDatabase } from './database.js'
import { SqliteEventParts } from './event-parts.js'
import { SqliteEvents } from './events.js'
import { SqliteTraces } from './traces.js'
import { SqliteUsers } from './users.js'

/**
 * The embedded store: one SQLite file. better-sqlite3 is synchronous, so every method runs to
 * completion before another request's code runs; across processes, SQLite's locks serialise writes.
 */
export class SqliteStore implements Store {
  readonly kind = 'sqlite'
  private readonly users: SqliteUsers
  private readonly events: SqliteEvents
  private readonly traces: SqliteTraces
  private readonly parts: SqliteEventParts
  private readonly probeWriteLock: () => void

  private constructor(private readonly db: Database.Database) {
    this.users = new SqliteUsers(db)
    this.events = new SqliteEvents(db)
    this.traces = new SqliteTraces(db)
    this.parts = new SqliteEventParts(db)
    const version = db.prepare('PRAGMA user_version')
    this.probeWriteLock = db.transaction(() => void version.get()).immediate
  }

  static open(path: string, { busyTimeoutMs = 5000 } = {}): SqliteStore {
    try {
      return new SqliteStore(openDatabase(path, busyTimeoutMs))
    } catch (error) {
      throw asStoreError(error)
    }
  }

  /** Runs synchronous SQLite work behind the port's promise interface, mapping store errors. */
  private async run<T>(work: () => T): Promise<T> {
    if (!this.db.open) throw new StoreUnavailableError('SQLite store is closed')
    try {
      return work()
    } catch (error) {
      throw asStoreError(error)
    }
  }

  /** Takes the write lock for an instant: a file another process keeps locked counts as unavailable. */
  ping = () => this.run(this.probeWriteLock)

  async close() {
    if (this.db.open) this.db.close()
  }

  createUser = (user: NewUser) => this.run(() => this.users.create(user))
  findUser = (name: string) => this.run(() => this.users.find(name))
  listUsers = () => this.run(() => this.users.list())
  countUsers = () => this.run(() => this.users.count())
  setRole = (name: string, role: Role) => this.run(() => this.users.setRole(name, role))
  setPasswordHash = (name: string, hash: string) => this.run(() => this.users.setPasswordHash(name, hash))
  removeUser = (name: string) => this.run(() => this.users.remove(name))
  saveRefreshToken = (name: string, tokenHash: string, expiresAt: number) =>
    this.run(() => this.users.saveRefreshToken(name, tokenHash, expiresAt))

  upsertEvents = (events: StoredEvent[]) => this.run(() => this.events.upsert(events))
  findEvent = (eventNo: number) => this.run(() => this.events.find(eventNo))
  listEvents = (query: EventListQuery) => this.run(() => this.events.list(query))

  async *basebandCallbacks(window: TimeWindow, pageSize: number): AsyncIterable<CallbackRow[]> {
    let after: EventPosition | undefined
    for (;;) {
      const page = await this.run(() => this.events.callbackPage(window, after, pageSize))
      if (page.length > 0) yield page
      if (page.length < pageSize) return
      const last = page[page.length - 1]!.event
      after = { timestamp: last.timestamp, event_no: last.event_no }
    }
  }

  createTrace = (eventNo: number, initial: Record<string, string>, now: number) =>
    this.run(() => this.traces.create(eventNo, initial, now))
  setTraceStatus = (eventNo: number, key: string, status: string, initial: Record<string, string>, now: number) =>
    this.run(() => this.traces.setStatus(eventNo, key, status, initial, now))
  findTrace = (eventNo: number) => this.run(() => this.traces.find(eventNo))
  upsertTraces = (traces: StoredTrace[]) => this.run(() => this.traces.upsert(traces))

  putDatatrail = (items: StoredDatatrail[]) => this.run(() => this.parts.putDatatrail(items))
  addHeartbeats = (heartbeats: HeartbeatInput[], now: number) => this.run(() => this.parts.addHeartbeats(heartbeats, now))

  /** Four index lookups in one read transaction, so the parts come from one snapshot. */
  eventParts = (eventNo: number): Promise<EventParts> =>
    this.run(
      this.db.transaction(() => ({
        event: this.events.find(eventNo),
        trace: this.traces.find(eventNo),
        datatrail: this.parts.datatrailOf(eventNo),
        heartbeats: this.parts.heartbeatsOf(eventNo)
      }))
    )
}
