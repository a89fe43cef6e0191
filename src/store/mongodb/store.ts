import type { Db } from 'mongodb'
import type { Sites } from '../../vocabulary.js'
import { guardedStore, type AdapterCollections, type StoreAdapter } from '../guarded-store.js'
import { StoreMissingError, StoreUnavailableError, type Store } from '../port.js'
import type { WhenMissing } from '../when-missing.js'
import { MongoDatatrail } from './datatrail.js'
import { asStoreError } from './driver-errors.js'
import { MongoEvents } from './events.js'
import { MongoFirstStart } from './first-start.js'
import { MongoTransitionFeed } from './feed.js'
import { MongoHeartbeats } from './heartbeats.js'
import { COLLECTIONS, ensureIndexes } from './indexes.js'
import { MongoTraces } from './traces.js'
import { MongoUsers } from './users.js'
import { MongoViews } from './views.js'

interface Connection {
  db: Db
  close: () => Promise<void>
  collections: AdapterCollections
  feed: MongoTransitionFeed
}

function collectionsOf(db: Db, sites: Sites, feed: MongoTransitionFeed): AdapterCollections {
  const tables = { events: new MongoEvents(db, sites), traces: new MongoTraces(db, sites), datatrail: new MongoDatatrail(db), heartbeats: new MongoHeartbeats(db) }
  return { users: new MongoUsers(db), ...tables, views: new MongoViews(db, tables, sites), transitions: feed, firstStart: new MongoFirstStart() }
}

/**
 * The store on MongoDB, shared by several service instances and the pipeline's own writers. Every
 * write is one atomic single-document operation or one unordered bulk write of idempotent ones;
 * every "database unreachable" error becomes StoreUnavailableError (503), and the driver reconnects
 * by itself, so the service serves again when the database returns. A server makes its store
 * before the database answers (see background.ts): until `serve` it answers unavailable.
 */
export class MongoStore implements StoreAdapter {
  readonly kind = 'mongodb'
  private connection: Connection | 'connecting' | 'closed' = 'connecting'
  /** The port over this adapter. */
  readonly store: Store = guardedStore(this)

  /** `stopConnecting` ends the connection being made in the background when the store closes. */
  private constructor(
    private readonly sites: Sites,
    private readonly stopConnecting: () => void
  ) {}

  /**
   * Creates the missing indexes, then serves from `db`; `close` ends its connection. With
   * `whenMissing` `refuse`, a database that holds none of the store's collections (a mistyped
   * MONGODB_DB) is refused before anything is created in it.
   */
  static async open(db: Db, close: () => Promise<void>, sites: Sites, whenMissing: WhenMissing = 'create'): Promise<Store> {
    if (whenMissing === 'refuse' && !(await holdsAStore(db))) {
      throw new StoreMissingError(`The MongoDB database ${db.databaseName} holds none of the store's collections: check MONGODB_DB`)
    }
    await ensureIndexes(db)
    const adapter = new MongoStore(sites, () => {})
    adapter.serve(db, close)
    return adapter.store
  }

  /** A store whose connection is being made in the background: unavailable until `serve`. */
  static connecting(sites: Sites, stopConnecting: () => void): MongoStore {
    return new MongoStore(sites, stopConnecting)
  }

  /** Serves from `db`, whose indexes exist, from now on; `close` ends its connection. */
  serve(db: Db, close: () => Promise<void>): void {
    if (this.connection !== 'connecting') throw new Error('A MongoDB store serves one connection, and not once closed')
    const feed = new MongoTransitionFeed(db)
    this.connection = { db, close, collections: collectionsOf(db, this.sites, feed), feed }
  }

  private serving(): Connection {
    if (typeof this.connection === 'string') throw new StoreUnavailableError(`MongoDB store is ${this.connection}`)
    return this.connection
  }

  collections(): AdapterCollections {
    return this.serving().collections
  }

  mapError(error: unknown): unknown {
    return asStoreError(error)
  }

  async ping(): Promise<void> {
    await this.serving().db.command({ ping: 1 })
  }

  async close(): Promise<void> {
    const connection = this.connection
    this.connection = 'closed'
    this.stopConnecting()
    if (typeof connection === 'string') return
    // The change stream's server cursor goes first, while the connection can still end it.
    await connection.feed.close().catch(() => {})
    await connection.close()
  }
}

async function holdsAStore(db: Db): Promise<boolean> {
  const names = new Set<string>(Object.values(COLLECTIONS))
  const found = await db.listCollections({}, { nameOnly: true }).toArray()
  return found.some((collection) => names.has(collection.name))
}
