import { MongoClient, type Db, type MongoClientOptions, type WriteConcernSettings } from 'mongodb'
import type { StageDeadlines } from '../../domain/stage-deadlines.js'
import type { ConfigurationOptions } from '../configuration.js'
import type { Sites } from '../../vocabulary.js'
import type { Store } from '../port.js'
import type { WhenMissing } from '../when-missing.js'
import { MongoStore, type MongoAuditOptions } from './store.js'
import { COMMAND_BACKOFF, realTime, retryWhileUnavailable, type Backoff, type StartupTools } from './startup.js'

/**
 * While the database is away a request waits at most this long for a server before its 503;
 * shorter than a load balancer's health-check timeout would make /ready flap, longer holds requests.
 */
export const SERVER_SELECTION_TIMEOUT_MS = 5_000
/** A connection that stops answering is given up after this long; below the 30 s request timeout. */
export const SOCKET_TIMEOUT_MS = 20_000
export const CONNECT_TIMEOUT_MS = 5_000

/**
 * Writes wait for a majority of the replica set and for the journal, so a 2xx answer survives the
 * loss of the primary and a crash. A connection string that sets `w` or `journal` decides instead
 * (the driver would otherwise let these options override it).
 */
export function writeConcernFor(url: string): WriteConcernSettings {
  const query = url.includes('?') ? url.slice(url.indexOf('?') + 1) : ''
  const named = new Set([...new URLSearchParams(query).keys()].map((key) => key.toLowerCase()))
  return {
    ...(named.has('w') ? {} : { w: 'majority' as const }),
    ...(named.has('journal') || named.has('j') ? {} : { journal: true })
  }
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
export interface MongoConnection {
  db(name: string): Db
  close(): Promise<void>
}

/**
 * A fresh client per attempt: a client whose first connect failed stays closed ("Topology is closed").
 * Aborting `signal` closes the client, which ends a connect still waiting for a server at once.
 */
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

/** The store's settings, and how the process uses its configuration and what it is told (store/open.ts StoreUse). */
export interface MongoSettings extends ConfigurationOptions {
  url: string
  dbName: string
  sites: Sites
  /** The stage deadlines the kept audit is made with; the defaults when not given. */
  deadlines?: StageDeadlines
  /** The store's clock (ms since the epoch); Date.now when not given. */
  now?: () => number
  /** Whether the store follows other programs' writes into the collections; see MongoAuditOptions. */
  watch?: boolean
  access?: MongoAuditOptions['access']
}

/** The kept audit's part of the settings, with the start-up log for the watcher's two lines. */
export const auditOptions = (settings: MongoSettings, log: (message: string) => void): MongoAuditOptions => ({
  ...(settings.deadlines === undefined ? {} : { deadlines: settings.deadlines }),
  ...(settings.now === undefined ? {} : { now: settings.now }),
  ...(settings.watch === undefined ? {} : { watch: settings.watch }),
  ...(settings.configuration === undefined ? {} : { configuration: settings.configuration }),
  ...(settings.instance === undefined ? {} : { instance: settings.instance }),
  ...(settings.notify === undefined ? {} : { notify: settings.notify }),
  ...(settings.lost === undefined ? {} : { lost: settings.lost }),
  ...(settings.access === undefined ? {} : { access: settings.access }),
  log
})

export interface OpenTools extends Partial<Pick<StartupTools, 'now' | 'sleep'>> {
  log: StartupTools['log']
  /** Only for commands (openMongoStore): `refuse` a database that holds no store yet. */
  whenMissing?: WhenMissing
  connect?: (url: string, options: MongoClientOptions, signal?: AbortSignal) => Promise<MongoConnection>
  backoff?: Backoff
}

/**
 * Connects and creates the indexes, retrying both while the database is unreachable, for at most
 * a minute: for commands, which need the store before they can do anything.
 */
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
