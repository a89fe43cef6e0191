import type { Db } from 'mongodb'
import { ComposedStore, type Collections } from '../composed-store.js'
import { StoreUnavailableError, type EventParts } from '../port.js'
import { asStoreError } from './errors.js'
import { MongoEventParts } from './event-parts.js'
import { MongoEvents } from './events.js'
import { ensureIndexes } from './indexes.js'
import { MongoTraces } from './traces.js'
import { MongoUsers } from './users.js'

/** Where a store made before its connection is: nothing to serve from, and no collections yet. */
type NotServing = 'connecting' | 'closed'

interface Connection {
  db: Db
  close: () => Promise<void>
}

const collectionsOf = (db: Db): Collections => ({
  users: new MongoUsers(db),
  events: new MongoEvents(db),
  traces: new MongoTraces(db),
  parts: new MongoEventParts(db)
})

/** Stands in for the collections until there is a connection; `run` lets no operation reach it. */
const NO_COLLECTIONS = new Proxy({} as Collections, {
  get() {
    throw new StoreUnavailableError('MongoDB store is not connected')
  }
})

/**
 * The store on MongoDB, shared by several service instances and the pipeline's own writers. Every
 * write is one atomic single-document operation or one unordered bulk write of idempotent ones;
 * every "database unreachable" error becomes StoreUnavailableError (503), and the driver reconnects
 * by itself, so the service serves again when the database returns. A server makes its store
 * before the database answers (see background.ts): until `serve` it answers unavailable.
 */
export class MongoStore extends ComposedStore {
  readonly kind = 'mongodb'
  private connection: Connection | NotServing = 'connecting'

  /** `stopConnecting` ends the connection being made in the background when the store closes. */
  private constructor(private readonly stopConnecting: () => void) {
    super(NO_COLLECTIONS)
  }

  /** Creates the missing indexes, then serves from `db`; `close` ends its connection. */
  static async open(db: Db, close: () => Promise<void>): Promise<MongoStore> {
    await ensureIndexes(db)
    const store = new MongoStore(() => {})
    store.serve(db, close)
    return store
  }

  /** A store whose connection is being made in the background: unavailable until `serve`. */
  static connecting(stopConnecting: () => void): MongoStore {
    return new MongoStore(stopConnecting)
  }

  /** Serves from `db`, whose indexes exist, from now on; `close` ends its connection. */
  serve(db: Db, close: () => Promise<void>): void {
    if (this.connection !== 'connecting') throw new Error('A MongoDB store serves one connection, and not once closed')
    this.connection = { db, close }
    this.collections = collectionsOf(db)
  }

  private serving(): Connection {
    if (typeof this.connection === 'string') throw new StoreUnavailableError(`MongoDB store is ${this.connection}`)
    return this.connection
  }

  protected async run<T>(work: () => T | Promise<T>): Promise<T> {
    this.serving()
    try {
      return await work()
    } catch (error) {
      throw asStoreError(error)
    }
  }

  ping() {
    return this.run(async () => void (await this.serving().db.command({ ping: 1 })))
  }

  async close() {
    const connection = this.connection
    this.connection = 'closed'
    this.stopConnecting()
    if (typeof connection !== 'string') await connection.close()
  }

  /** Four indexed lookups at once; not one snapshot as on SQLite: the parts are independent documents. */
  eventParts(eventNo: number): Promise<EventParts> {
    return this.run(async () => {
      const { events, traces, parts } = this.collections
      const [event, trace, datatrail, heartbeats] = await Promise.all([
        events.find(eventNo),
        traces.find(eventNo),
        parts.datatrailOf(eventNo),
        parts.heartbeatsOf(eventNo)
      ])
      return { event, trace, datatrail, heartbeats }
    })
  }
}
