import { setTimeout } from 'node:timers/promises'
import { MongoClient, type Db, type MongoClientOptions, type WriteConcernSettings } from 'mongodb'
import type { Sites } from '../../vocabulary.js'
import { StoreUnavailableError, type Store } from '../port.js'
import type { WhenMissing } from '../when-missing.js'
import { asStoreError } from './driver-errors.js'
import { MongoStore, type MongoAuditOptions } from './store.js'

/** While the database is away a request waits this long for a server before its 503: shorter makes /ready flap, longer holds requests. */
export const SERVER_SELECTION_TIMEOUT_MS = 5_000
/** A connection that stops answering is given up after this long; below the 30 s request timeout. */
export const SOCKET_TIMEOUT_MS = 20_000
const CONNECT_TIMEOUT_MS = 5_000

/** Writes wait for a majority and the journal (a 2xx survives losing the primary), unless the connection string sets `w` or `journal`. */
function writeConcernFor(url: string): WriteConcernSettings {
  const query = url.includes('?') ? url.slice(url.indexOf('?') + 1) : ''
  const named = new Set([...new URLSearchParams(query).keys()].map((key) => key.toLowerCase()))
  return { ...(named.has('w') ? {} : { w: 'majority' as const }), ...(named.has('journal') || named.has('j') ? {} : { journal: true }) }
}

export function clientOptions(url: string): MongoClientOptions {
  return {
    appName: 'frb-tracer',
    serverSelectionTimeoutMS: SERVER_SELECTION_TIMEOUT_MS,
    socketTimeoutMS: SOCKET_TIMEOUT_MS,
    connectTimeoutMS: CONNECT_TIMEOUT_MS,
    writeConcern: writeConcernFor(url)
  }
}

/** The part of MongoClient start-up uses: a test passes its own. */
export type MongoConnection = { db(name: string): Db; close(): Promise<void> }

/** A fresh client per attempt: one whose first connect failed stays closed. Aborting `signal` ends a connect still waiting at once. */
export async function connectClient(url: string, options: MongoClientOptions, signal?: AbortSignal): Promise<MongoConnection> {
  const client = new MongoClient(url, options)
  const abandon = () => void client.close().catch(() => {})
  signal?.addEventListener('abort', abandon, { once: true })
  try {
    await client.connect()
    return client
  } catch (error) {
    await client.close().catch(() => {})
    throw error
  } finally {
    signal?.removeEventListener('abort', abandon)
  }
}

/** How start-up waits for a database that does not answer yet; past `totalMs` after the first attempt (if set) it gives up. */
type Backoff = { firstDelayMs: number; maxDelayMs: number; totalMs?: number }

/** A server waits for its database as long as it takes, listening (not ready): an orchestrator sees a live instance, not a crash loop. */
export const SERVE_BACKOFF: Backoff = { firstDelayMs: 500, maxDelayMs: 8_000 }
/** A command waits at most a minute: long enough for a database that is starting, short enough that a wrong address fails visibly. */
const COMMAND_BACKOFF: Backoff = { ...SERVE_BACKOFF, totalMs: 60_000 }

/** The clock, the wait (rejecting once `signal` aborts) and the log line: injected, so tests need no real time. */
type StartupTools = { now(): number; sleep(ms: number, signal?: AbortSignal): Promise<void>; log(message: string): void }

export const realTime: Pick<StartupTools, 'now' | 'sleep'> = { now: () => Date.now(), sleep: (ms, signal) => setTimeout(ms, undefined, { signal }) }

/** Runs `attempt` until it succeeds, retrying while the database is unreachable; any other error, or aborting `signal`, ends it at once. */
export async function retryWhileUnavailable<T>(attempt: () => Promise<T>, backoff: Backoff, tools: StartupTools, signal?: AbortSignal): Promise<T> {
  const started = tools.now()
  let delay = backoff.firstDelayMs
  for (let attempts = 1; ; attempts++) {
    signal?.throwIfAborted()
    try {
      return await attempt()
    } catch (error) {
      // Stopped while the attempt ran: its failure (often that very stop) is no reason to go on.
      signal?.throwIfAborted()
      if (!(asStoreError(error) instanceof StoreUnavailableError)) throw error
      const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error)
      if (backoff.totalMs !== undefined && tools.now() - started + delay > backoff.totalMs) {
        throw new StoreUnavailableError(`MongoDB is unreachable; gave up after ${attempts} attempts (${reason})`, { cause: error })
      }
      tools.log(`MongoDB is unreachable (attempt ${attempts}, ${reason}); retrying in ${delay} ms`)
      await tools.sleep(delay, signal)
      delay = Math.min(delay * 2, backoff.maxDelayMs)
    }
  }
}

/** The store's settings, and how the process uses it (store/open.ts StoreUse). */
export interface MongoSettings extends Omit<MongoAuditOptions, 'log'> {
  url: string
  dbName: string
  sites: Sites
}

/** The store's options, with the start-up log for the watcher's two lines. */
export const auditOptions = ({ url: _url, dbName: _dbName, sites: _sites, ...options }: MongoSettings, log: (message: string) => void): MongoAuditOptions => ({
  ...options,
  log
})

export interface OpenTools extends Partial<Pick<StartupTools, 'now' | 'sleep'>> {
  log: StartupTools['log']
  /** Only for commands (openMongoStore): `refuse` a database that holds no store yet. */
  whenMissing?: WhenMissing
  connect?: (url: string, options: MongoClientOptions, signal?: AbortSignal) => Promise<MongoConnection>
  backoff?: Backoff
}

/** Connects and creates the indexes, retrying while the database is unreachable, for at most a minute: for commands. */
export function openMongoStore(settings: MongoSettings, tools: OpenTools): Promise<Store> {
  const { connect = connectClient, backoff = COMMAND_BACKOFF, whenMissing, ...rest } = tools
  return retryWhileUnavailable(
    async () => {
      const connection = await connect(settings.url, clientOptions(settings.url))
      try {
        const options = auditOptions(settings, rest.log)
        return await MongoStore.open(connection.db(settings.dbName), () => connection.close(), settings.sites, whenMissing, options)
      } catch (error) {
        await connection.close().catch(() => {})
        throw error
      }
    },
    backoff,
    { ...realTime, ...rest }
  )
}
