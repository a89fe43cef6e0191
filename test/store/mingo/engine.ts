import { MongoNetworkError, MongoNotConnectedError, type Db, type Document } from 'mongodb'
import { MingoCollection } from './collection.js'
import { serverError } from './values.js'

/** One call the adapter made, for tests that check how a write is done (one atomic operation). */
export interface Call {
  collection: string
  method: string
}

/**
 * An in-process stand-in for one MongoDB database, evaluating the adapter's query, update, sort and
 * projection documents with mingo, behind exactly the subset of the driver's Db and Collection the
 * adapter calls. It checks the adapter's query semantics; it is neither the driver nor a server
 * (no wire protocol, no concurrency, no write concern, no server-side type brackets). Change streams
 * are emulated (see change-streams.ts): each collection logs its writes' change events, which a
 * stream reads on demand.
 */
export class MingoEngine {
  /** While true every call rejects with a real MongoNetworkError, as when the database is down. */
  away = false
  /** False: a standalone server, on which a change stream cannot be opened (code 40573). */
  replicaSet = true
  readonly calls: Call[] = []
  private closed = false
  private readonly collections = new Map<string, MingoCollection>()
  private readonly injected = new Map<string, Error[]>()
  private readonly before = new Map<string, (() => void)[]>()
  private actionRunning = false

  constructor(readonly databaseName = 'frb_master') {}

  /** The engine as the adapter sees it: the driver's Db type, of which it implements the used part. */
  get db(): Db {
    const database = {
      databaseName: this.databaseName,
      collection: (name: string) => this.collection(name),
      listCollections: (filter: Document, options: { nameOnly?: boolean }) => {
        if (Object.keys(filter).length > 0 || options.nameOnly !== true) throw new Error('The mingo engine lists collections by name only')
        return {
          toArray: async () => {
            this.check('', 'listCollections')
            return [...this.collections].filter(([, collection]) => collection.exists).map(([name]) => ({ name, type: 'collection' }))
          }
        }
      },
      command: async (command: Document) => {
        this.check('', 'command')
        if (Object.keys(command).join() !== 'ping') throw new Error('The mingo engine runs only the ping command')
        return { ok: 1 }
      }
    }
    return database as unknown as Db
  }

  collection(name: string): MingoCollection {
    let collection = this.collections.get(name)
    if (collection === undefined) {
      collection = new MingoCollection(`${this.databaseName}.${name}`, (method) => this.check(name, method))
      this.collections.set(name, collection)
    }
    return collection
  }

  /** The next call of `method` (on any collection) rejects with `error`; then calls work again. */
  failNext(method: string, error: Error): void {
    this.injected.set(method, [...(this.injected.get(method) ?? []), error])
  }

  /**
   * `action` runs just before the next call of `method` does its work, as another writer's write
   * landing between two of the adapter's calls would.
   */
  beforeNext(method: string, action: () => void): void {
    this.before.set(method, [...(this.before.get(method) ?? []), action])
  }

  /** What the driver does after MongoClient.close(): every later call is refused. */
  async close(): Promise<void> {
    this.closed = true
  }

  private check(collection: string, method: string): void {
    this.calls.push({ collection, method })
    if (this.closed) throw new MongoNotConnectedError('Client must be connected before running operations')
    if (this.away) throw new MongoNetworkError('connect ECONNREFUSED 127.0.0.1:27017 (the mingo engine is away)')
    if (method === 'watch' && !this.replicaSet) {
      throw serverError(40573, 'Location40573', 'The $changeStream stage is only supported on replica sets')
    }
    const error = this.injected.get(method)?.shift()
    if (error !== undefined) throw error
    // An action's own calls run no other action: each lands between two of the adapter's calls.
    const action = this.actionRunning ? undefined : this.before.get(method)?.shift()
    if (action === undefined) return
    this.actionRunning = true
    try {
      action()
    } finally {
      this.actionRunning = false
    }
  }
}

/** E11000 as a racing upsert receives it from a real server. */
export const duplicateKeyError = (collection: string, key: Document) =>
  serverError(11000, 'DuplicateKey', `E11000 duplicate key error collection: frb_master.${collection} dup key: ${JSON.stringify(key)}`, {
    keyValue: key
  })
