import type { Db } from 'mongodb'
import { ComposedStore } from '../composed-store.js'
import type { EventParts } from '../port.js'
import { asStoreError } from './errors.js'
import { MongoEventParts } from './event-parts.js'
import { MongoEvents } from './events.js'
import { ensureIndexes } from './indexes.js'
import { MongoTraces } from './traces.js'
import { MongoUsers } from './users.js'

/**
 * The store on MongoDB, shared by several service instances and the pipeline's own writers. Every
 * write is one atomic single-document operation or one unordered bulk write of idempotent ones;
 * every "database unreachable" error becomes StoreUnavailableError (503), and the driver reconnects
 * by itself, so the service serves again when the database returns.
 */
export class MongoStore extends ComposedStore {
  readonly kind = 'mongodb'

  private constructor(
    private readonly db: Db,
    private readonly closeConnection: () => Promise<void>
  ) {
    super({ users: new MongoUsers(db), events: new MongoEvents(db), traces: new MongoTraces(db), parts: new MongoEventParts(db) })
  }

  /** Creates the missing indexes, then serves from `db`; `close` ends its connection. */
  static async open(db: Db, close: () => Promise<void>): Promise<MongoStore> {
    await ensureIndexes(db)
    return new MongoStore(db, close)
  }

  protected async run<T>(work: () => T | Promise<T>): Promise<T> {
    try {
      return await work()
    } catch (error) {
      throw asStoreError(error)
    }
  }

  ping() {
    return this.run(async () => void (await this.db.command({ ping: 1 })))
  }

  close() {
    return this.closeConnection()
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
