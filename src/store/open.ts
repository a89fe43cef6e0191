import type { Config } from '../config.js'
import { ConfigError } from '../config.js'
import type { Store } from './port.js'
import type { WhenMissing } from './when-missing.js'

/** Start-up messages before the app (and its logger) exists go to standard error. */
const toStderr = (message: string) => void process.stderr.write(`${message}\n`)

// loadConfig requires it with mongodb; a Config built by hand may still lack it.
function mongoSettings(config: Config) {
  if (config.MONGODB_URL === undefined) throw new ConfigError('Invalid configuration: MONGODB_URL is required when TRACER_STORE=mongodb')
  return { url: config.MONGODB_URL, dbName: config.MONGODB_DB, sites: config.TRACER_SITES, deadlines: config.STAGE_DEADLINES }
}

export interface OpenOptions {
  /** When there is no store yet; `create` unless told otherwise (see WhenMissing). */
  whenMissing?: WhenMissing
  /** Receives the retries while MongoDB does not answer, for at most a minute. */
  log?: (message: string) => void
}

/** The store chosen by TRACER_STORE, ready to use: for commands, and a SQLite server. */
export async function openStore(config: Config, { whenMissing = 'create', log = toStderr }: OpenOptions = {}): Promise<Store> {
  switch (config.TRACER_STORE) {
    case 'sqlite': {
      // Each adapter is loaded only when chosen: a process holds the modules of one store, not both.
      const { openSqliteStore } = await import('./sqlite/store.js')
      return openSqliteStore(config.TRACER_DB, config.TRACER_SITES, { busyTimeoutMs: config.SQLITE_BUSY_TIMEOUT_MS, whenMissing, deadlines: config.STAGE_DEADLINES })
    }
    case 'mongodb': {
      // The driver is most of a start-up's module loading, and SQLite needs none of it.
      const { openMongoStore } = await import('./mongodb/connect.js')
      return openMongoStore(mongoSettings(config), { log, whenMissing })
    }
  }
}

export interface ServingStore {
  store: Store
  /** Resolves once the store serves and is prepared; rejects with an error that waiting cannot fix. */
  connected: Promise<void>
}

/**
 * The store for a server, which listens whatever the database does. SQLite is opened and
 * prepared before this resolves. MongoDB connects in the background, retrying for as long as it
 * does not answer (each retry goes to `log`); its store answers 503 until then, and `prepare`
 * (start-up work that needs the store) runs once it serves.
 */
export async function openStoreForServing(
  config: Config,
  { log, prepare }: { log: (message: string) => void; prepare: (store: Store) => Promise<void> }
): Promise<ServingStore> {
  switch (config.TRACER_STORE) {
    case 'sqlite': {
      const store = await openStore(config, { whenMissing: 'create-for-demo' })
      await prepare(store)
      return { store, connected: Promise.resolve() }
    }
    case 'mongodb': {
      const { connectInBackground } = await import('./mongodb/background.js')
      return connectInBackground(mongoSettings(config), { log, prepare })
    }
  }
}
