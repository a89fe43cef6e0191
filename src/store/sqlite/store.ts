import type Database from 'better-sqlite3'
import { ComposedStore } from '../composed-store.js'
import { StoreUnavailableError, type EventParts } from '../port.js'
import { asStoreError, openDatabase } from './database.js'
import { SqliteEventParts } from './event-parts.js'
import { SqliteEvents } from './events.js'
import { SqliteTraces } from './traces.js'
import { SqliteUsers } from './users.js'

/**
 * The embedded store: one SQLite file. better-sqlite3 is synchronous, so every method runs to
 * completion before another request's code runs; across processes, SQLite's locks serialise writes.
 */
export class SqliteStore extends ComposedStore {
  readonly kind = 'sqlite'
  private readonly probeWriteLock: () => void
  private readonly readParts: (eventNo: number) => EventParts

  private constructor(private readonly db: Database.Database) {
    const collections = {
      users: new SqliteUsers(db),
      events: new SqliteEvents(db),
      traces: new SqliteTraces(db),
      parts: new SqliteEventParts(db)
    }
    super(collections)
    const version = db.prepare('PRAGMA user_version')
    this.probeWriteLock = db.transaction(() => void version.get()).immediate
    // Four index lookups in one read transaction, so the parts come from one snapshot.
    this.readParts = db.transaction((eventNo: number) => ({
      event: collections.events.find(eventNo),
      trace: collections.traces.find(eventNo),
      datatrail: collections.parts.datatrailOf(eventNo),
      heartbeats: collections.parts.heartbeatsOf(eventNo)
    }))
  }

  static open(path: string, { busyTimeoutMs = 5000 } = {}): SqliteStore {
    try {
      return new SqliteStore(openDatabase(path, busyTimeoutMs))
    } catch (error) {
      throw asStoreError(error)
    }
  }

  /** Runs synchronous SQLite work behind the port's promise interface, mapping store errors. */
  protected async run<T>(work: () => T | Promise<T>): Promise<T> {
    if (!this.db.open) throw new StoreUnavailableError('SQLite store is closed')
    try {
      return await work()
    } catch (error) {
      throw asStoreError(error)
    }
  }

  /** Takes the write lock for an instant: a file another process keeps locked counts as unavailable. */
  ping() {
    return this.run(this.probeWriteLock)
  }

  async close() {
    if (this.db.open) this.db.close()
  }

  eventParts(eventNo: number) {
    return this.run(() => this.readParts(eventNo))
  }
}
