import type { Db } from 'mongodb'
import { DEFAULT_STAGE_DEADLINES, parseStageDeadlines, type StageDeadlines } from '../../domain/stage-deadlines.js'
import type { Sites } from '../../vocabulary.js'
import { guardedStore, type AdapterCollections, type StoreAdapter } from '../guarded-store.js'
import { StoreMissingError, StoreUnavailableError, type Store } from '../port.js'
import type { WhenMissing } from '../when-missing.js'
import { Keeper, type KeeperConfig } from '../../kept-audit/keeper.js'
import { AuditRecords } from './audit-records.js'
import { configureAndRebuild, MongoConfiguration } from './store-configuration.js'
import type { ConfigurationOptions } from '../configuration.js'
import { InstanceLease } from '../configuration-use.js'
import { AuditWatcher } from './audit-watcher.js'
import { MongoKeptDocuments } from './kept-documents.js'
import { MongoDatatrail } from './datatrail.js'
import { asStoreError } from './driver-errors.js'
import { MongoEvents } from './events.js'
import { MongoTransitionFeed, MongoVerdictFeed } from './change-feed.js'
import { MongoHeartbeats } from './heartbeats.js'
import { COLLECTIONS, ensureIndexes } from './indexes.js'
import { MongoTraces } from './traces.js'
import { MongoUsers } from './users.js'
import { HistorySummaryWrites, MongoRecordWrites } from './record-writes.js'
import { MongoViews } from './views.js'

/** How a store keeps the audit of its events and uses its configuration: all optional, so a caller that has no opinion changes nothing. */
export interface MongoAuditOptions extends ConfigurationOptions {
  /** The stage deadlines of the kept looks; the defaults when not given. */
  deadlines?: StageDeadlines
  /** The store's clock, ms since the epoch. */
  now?: () => number
  /** Whether to follow other programs' writes (audit-watcher.ts): a server's store does; a command's, whose own writes keep their audits, not. */
  watch?: boolean
  /** Where the watcher says that it stopped working and that it works again. */
  log?: (message: string) => void
  /** `read-only` for a command that only reads: the missing indexes are left to a process that writes. */
  access?: 'read-write' | 'read-only'
}

interface Connection {
  db: Db
  close: () => Promise<void>
  collections: AdapterCollections
  /** What goes before the connection when it closes, while it can still end them: the watcher's pass and the change streams' server cursors. */
  parts: { close(): Promise<void> }[]
}

/**
 * The store on MongoDB, shared by instances and the pipeline. Every write is one atomic single-document operation or
 * one unordered bulk write of idempotent ones, then the recompute of its events' kept audit. "Database unreachable"
 * is a 503; the driver reconnects by itself. A server's store answers unavailable until `serve` (background.ts).
 */
export class MongoStore implements StoreAdapter {
  readonly kind = 'mongodb'
  private connection: Connection | 'connecting' | 'closed' = 'connecting'
  readonly store: Store = guardedStore(this)
  private readonly audit: KeeperConfig

  /** `stopConnecting` ends the connection being made in the background when the store closes. */
  private constructor(
    sites: Sites,
    private readonly stopConnecting: () => void,
    private readonly options: MongoAuditOptions
  ) {
    this.audit = { sites, deadlines: options.deadlines ?? parseStageDeadlines(DEFAULT_STAGE_DEADLINES), clock: options.now ?? Date.now }
  }

  /** Creates the missing indexes, then serves; `refuse` refuses a database with none of the store's collections (a mistyped MONGODB_DB). */
  static async open(
    db: Db,
    close: () => Promise<void>,
    sites: Sites,
    whenMissing: WhenMissing = 'create',
    options: MongoAuditOptions = {}
  ): Promise<Store> {
    if (whenMissing === 'refuse' && !(await holdsAStore(db))) {
      throw new StoreMissingError(`The MongoDB database ${db.databaseName} holds none of the store's collections: check MONGODB_DB`)
    }
    // An index a new release adds may take long to build on a large collection: not a reader's to start.
    if (options.access !== 'read-only') await ensureIndexes(db)
    const adapter = new MongoStore(sites, () => {}, options)
    await adapter.serve(db, close)
    return adapter.store
  }

  /** A store whose connection is being made in the background: unavailable until `serve`. */
  static connecting(sites: Sites, stopConnecting: () => void, options: MongoAuditOptions = {}): MongoStore {
    return new MongoStore(sites, stopConnecting, { ...options, watch: options.watch ?? true })
  }

  /**
   * Serves from `db`, whose indexes exist, once the kept audit agrees with the configuration
   * (store-configuration.ts); rejects when that fails or the store closes meanwhile. The watcher begins first, so no
   * write of another program meanwhile is missed.
   */
  async serve(db: Db, close: () => Promise<void>): Promise<void> {
    if (this.connection !== 'connecting') throw new Error('A MongoDB store serves one connection, and not once closed')
    const { sites, deadlines, clock } = this.audit
    const summaries = new HistorySummaryWrites(db)
    const auditRecords = new AuditRecords(db, sites, summaries)
    const storage = new MongoKeptDocuments(db, auditRecords)
    const keeper = new Keeper(storage, this.audit)
    const watcher = this.options.watch === true ? new AuditWatcher(db, keeper, this.options.log ?? (() => {}), summaries) : undefined
    try {
      await watcher?.begin()
      await configureAndRebuild(db, keeper, storage, this.options)
      if (this.closed()) throw new StoreUnavailableError('MongoDB store is closed')
    } catch (error) {
      await watcher?.close()
      throw error
    }
    const { configuration: use = 'adopt', instance, lost = () => {} } = this.options
    const wanted = { sites: sites.names, deadlines }
    const lease = use === 'adopt' && instance !== undefined ? new InstanceLease(new MongoConfiguration(db), instance, wanted, clock, lost) : undefined
    const transitions = new MongoTransitionFeed(db)
    const verdictChanges = new MongoVerdictFeed(db)
    // Every record collection is written through this one place, which keeps the audit of what was written.
    const records = new MongoRecordWrites(db, keeper)
    const tables = {
      events: new MongoEvents(db, sites, records),
      traces: new MongoTraces(db, sites, records),
      datatrail: new MongoDatatrail(db, records),
      heartbeats: new MongoHeartbeats(db, records)
    }
    const collections: AdapterCollections = {
      users: new MongoUsers(db),
      ...tables,
      views: new MongoViews(db, tables, sites, auditRecords),
      transitions,
      audits: keeper,
      verdictChanges,
      // Never the demo: a new `users` collection says nothing of whether the pipeline's collections hold real data.
      firstStart: { awaitsDemo: () => false, seedDemo: () => 'not-awaited' }
    }
    const closeAll = async () => (await lease?.stop(), close())
    this.connection = { db, close: closeAll, collections, parts: [...(watcher === undefined ? [] : [watcher]), transitions, verdictChanges] }
    watcher?.run()
  }

  /** A method, not a comparison after the awaits of serve: the store may have been closed meanwhile. */
  private closed(): boolean {
    return this.connection === 'closed'
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
    for (const part of connection.parts) await part.close().catch(() => {})
    await connection.close()
  }
}

async function holdsAStore(db: Db): Promise<boolean> {
  const names = new Set<string>(Object.values(COLLECTIONS))
  const found = await db.listCollections({}, { nameOnly: true }).toArray()
  return found.some((collection) => names.has(collection.name))
}
