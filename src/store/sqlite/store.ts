import type Database from 'better-sqlite3'
import type { Sites } from '../../vocabulary.js'
import { guardedStore, type StoreAdapter } from '../guarded-store.js'
import { LockWaits } from '../lock-waits.js'
import { StoreUnavailableError, type Store } from '../port.js'
import type { WhenMissing } from '../when-missing.js'
import { SqliteConnection } from './connection.js'
import { asStoreError, curedByReopen, isLockedOut, isOutOfSpace, openDatabase, throughBusy, type Access } from './database.js'
import { KeptAuditRebuild, type RebuildWhen } from './kept-audit-rebuild.js'
import type { ConfigurationConflictError, ConfigurationUse, Instance } from '../configuration.js'
import { resolveConfiguration } from '../configuration-use.js'
import { atOnce } from '../../maybe.js'
import { SqliteConfiguration, sqliteLease } from './store-configuration.js'
import { DEFAULT_STAGE_DEADLINES, parseStageDeadlines, type StageDeadlines } from '../../domain/stage-deadlines.js'

const DEFAULT_DEADLINES = parseStageDeadlines(DEFAULT_STAGE_DEADLINES)

/** A connection a reopen may cure is replaced at most this often: a file that stays unusable costs one open a second. */
export const REOPEN_INTERVAL_MS = 1000

/** A statement waits for no lock: SQLite would wait on the event loop; operations wait between tries instead (lock-waits.ts, throughBusy). */
const NO_LOCK_WAIT_MS = 0

/**
 * Other programs' writes are marked: triggers on the record tables (migrations.ts) note each row's
 * event in `audit_marks` in the writer's transaction, and the keeper looks at those events again
 * (SqliteKeptRows.marked). This connection's own writes keep their audit, so a TEMP trigger, this
 * connection's alone, made before any write, drops their marks (RAISE(IGNORE) skips the mark).
 */
function dropOwnMarks(db: Database.Database): void {
  db.exec(`CREATE TEMP TRIGGER IF NOT EXISTS own_writes_unmarked BEFORE INSERT ON main.audit_marks BEGIN SELECT RAISE(IGNORE); END`)
}

export interface SqliteOptions {
  /** How long an operation waits for another process's lock before the store counts as unavailable. */
  busyTimeoutMs?: number
  /** Makes the Database of each connection: a test passes one that fails as a file or a disk would. */
  createDatabase?: (path: string) => Database.Database
  /** The clock that spaces reopens: injected, so tests need no real time. */
  now?: () => number
  whenMissing?: WhenMissing
  deadlines?: StageDeadlines
  /** How this process treats the store's configuration (store/configuration.ts). */
  configuration?: ConfigurationUse
  /** `read-only` for a command that only reads: never written, never migrated (database.ts). */
  access?: Access
  /** A serving instance: holds a lease with its configuration while the store is open (not for `:memory:`). */
  instance?: Instance
  /** Told when the start changed the store's configuration or makes its kept state again. */
  notify?: (line: string) => void
  /** Told when the instance finds the store's configuration changed under it: it must stop serving. */
  lost?: (error: ConfigurationConflictError) => void
  /** When output texts and a kept audit that are due are made again (kept-audit-rebuild.ts). */
  rebuild?: RebuildWhen
  /** Events rebuilt, and rows of the output texts made again, a transaction: REBUILD_BATCH and TEXTS_BATCH unless a test's smaller. */
  rebuildBatch?: number
  textsBatch?: number
  /** How a rebuild `while-serving` yields before each batch: setImmediate unless a test steps it. */
  rebuildPace?: (next: () => void) => void
  /** What a rebuild `while-serving` waits for before its second batch: a server's listening (open.ts), which no batch may hold up. */
  rebuildAfter?: Promise<void>
}

/** The embedded store on the SQLite file at `path` (`:memory:` for one that lives with the process). */
export function openSqliteStore(
  path: string,
  sites: Sites,
  options: SqliteOptions = {}
): Store {
  const { busyTimeoutMs = 5000, createDatabase, now = Date.now, whenMissing = 'create', deadlines = DEFAULT_DEADLINES, access = 'read-write' } = options
  const { configuration = 'adopt', notify = () => {}, lost = () => {}, rebuild: when = 'before-open', rebuildBatch, textsBatch, rebuildPace } = options
  const lease = options.instance === undefined || path === ':memory:' || configuration !== 'adopt' ? undefined : { instance: options.instance, now }
  const wanted = { sites: sites.names, deadlines }
  const rebuild = new KeptAuditRebuild({ busyTimeoutMs, notify, batch: rebuildBatch, textsBatch, pace: rebuildPace })
  let batchesLeft = false
  // A reopen never creates (a file removed under a service leaves it unavailable, not empty), nor
  // begins a rebuild: it takes the batches of one under way. A start that makes nothing learns how far one went.
  const connect = (creating: WhenMissing = 'refuse', starting = false) => {
    const db = openDatabase(path, NO_LOCK_WAIT_MS, createDatabase, creating, access)
    try {
      if (access === 'read-write') dropOwnMarks(db)
      const { refresh, changed } = atOnce(resolveConfiguration(new SqliteConfiguration(db), wanted, configuration, { instance: lease?.instance, now: now() }))
      if (changed !== undefined) notify(changed)
      const connection = new SqliteConnection(db, sites, { deadlines, now, rebuilding: () => rebuild.active, texts: rebuild })
      if (starting && refresh) batchesLeft = rebuild.begin(connection, when)
      else if (starting) rebuild.observe(connection, configuration === 'read')
      return connection
    } catch (error) {
      db.close()
      throw error
    }
  }
  try {
    const first = throughBusy(() => connect(whenMissing, true), busyTimeoutMs)
    const adapter = new SqliteAdapter(first, path === ':memory:' ? undefined : () => connect(), now)
    const guarded = guardedStore(adapter, new LockWaits({ budgetMs: busyTimeoutMs, isLocked: isLockedOut, probe: () => adapter.probeLock() }), rebuild)
    const store = { ...guarded, close: async () => (rebuild.stop(), guarded.close()) }
    if (batchesLeft && when === 'while-serving') {
      const batches = () => rebuild.continue(() => adapter.current())
      if (options.rebuildAfter === undefined) batches()
      else void options.rebuildAfter.then(batches)
    }
    if (lease === undefined) return store
    const held = sqliteLease(throughBusy(() => openDatabase(path, NO_LOCK_WAIT_MS, createDatabase, 'refuse'), busyTimeoutMs), lease, wanted, lost)
    return { ...store, close: async () => (await held.stop(), store.close()) }
  } catch (error) {
    throw asStoreError(error)
  }
}

/** Operations run whole (better-sqlite3 is synchronous); a connection that fails is replaced between two, so no transaction is cut. */
class SqliteAdapter implements StoreAdapter {
  readonly kind = 'sqlite'
  private closed = false
  private reopenWanted = false
  private lastReopen = -Infinity
  /** A write met a full disk: until a probe commits again, ping commits its probe to find out. */
  private outOfSpace = false

  constructor(
    private connection: SqliteConnection,
    /** Undefined for an in-memory database, which a new connection would find empty. */
    private readonly connect: (() => SqliteConnection) | undefined,
    private readonly now: () => number
  ) {}

  collections() {
    if (this.closed) throw new StoreUnavailableError('SQLite store is closed')
    if (this.reopenWanted) this.reopen()
    return this.connection.collections
  }

  current(): SqliteConnection {
    this.collections()
    return this.connection
  }

  probeLock(): void {
    this.collections()
    this.connection.probeLock()
  }

  mapError(error: unknown): unknown {
    if (curedByReopen(error)) this.reopenWanted = true
    if (isOutOfSpace(error)) this.outOfSpace = true
    return asStoreError(error)
  }

  /** Ready when a write could be committed now (tryWrite); after a full disk, once a page commits again. */
  ping(): void {
    this.collections()
    if (!this.outOfSpace) return this.connection.tryWrite()
    this.connection.commitWrite()
    this.outOfSpace = false
  }

  async close(): Promise<void> {
    this.closed = true
    this.connection.close()
  }

  /** The new connection opens before the old one closes; while the file cannot be opened, the old one serves what it can. */
  private reopen(): void {
    const now = this.now()
    if (this.connect === undefined || now - this.lastReopen < REOPEN_INTERVAL_MS) return
    this.lastReopen = now
    let next: SqliteConnection
    try {
      next = this.connect()
    } catch {
      return
    }
    const previous = this.connection
    this.connection = next
    this.reopenWanted = false
    try {
      previous.close()
    } catch {
      // A broken connection may fail to close; it is dropped all the same.
    }
  }
}
