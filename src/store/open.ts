import type { Config } from '../config.js'
import { ConfigError } from '../config.js'
import { thisInstance, type ConfigurationOptions } from './configuration.js'
import type { Store } from './port.js'
import type { WhenMissing } from './when-missing.js'

/** Start-up messages before the app (and its logger) exists go to standard error. */
const toStderr = (message: string) => void process.stderr.write(`${message}\n`)

// loadConfig requires it with mongodb; a Config built by hand may still lack it.
function mongoSettings(config: Config, { rebuild: _sqliteOnly, rebuildAfter: _sqliteAlone, ...use }: StoreUse) {
  if (config.MONGODB_URL === undefined) throw new ConfigError('Invalid configuration: MONGODB_URL is required when TRACER_STORE=mongodb')
  return { url: config.MONGODB_URL, dbName: config.MONGODB_DB, sites: config.TRACER_SITES, deadlines: config.STAGE_DEADLINES, ...use }
}

export interface StoreUse extends ConfigurationOptions {
  /**
   * When SQLite makes due output texts and kept audit again: before handing the store over unless told otherwise; a server's
   * while it serves; a primary leaves them to its workers after one batch. MongoDB makes its audit before it serves, always.
   */
  rebuild?: 'before-open' | 'while-serving' | 'left'
  /** SQLite, `while-serving`: the batches left wait for this (a server's listening) before the first. */
  rebuildAfter?: Promise<void>
  /** `read-only` for a command that only reads: SQLite opens the file so, refusing an older schema; MongoDB creates no missing index. */
  access?: 'read-write' | 'read-only'
}

export interface OpenOptions extends StoreUse {
  /** When there is no store yet; `create` unless told otherwise (see WhenMissing). */
  whenMissing?: WhenMissing
  /** Receives the retries while MongoDB does not answer, for at most a minute. */
  log?: (message: string) => void
}

/** The store chosen by TRACER_STORE, ready to use (a SQLite server's kept audit may still be made: StoreUse.rebuild). */
export async function openStore(config: Config, { whenMissing = 'create', log = toStderr, ...use }: OpenOptions = {}): Promise<Store> {
  switch (config.TRACER_STORE) {
    case 'sqlite': {
      // Each adapter is loaded only when chosen: a process holds the modules of one store, not both.
      const { openSqliteStore } = await import('./sqlite/store.js')
      const options = { busyTimeoutMs: config.SQLITE_BUSY_TIMEOUT_MS, rebuildBatch: config.TRACER_REBUILD_BATCH, whenMissing, deadlines: config.STAGE_DEADLINES, ...use }
      return openSqliteStore(config.TRACER_DB, config.TRACER_SITES, options)
    }
    case 'mongodb': {
      // The driver is most of a start-up's module loading, and SQLite needs none of it.
      const { openMongoStore } = await import('./mongodb/connect.js')
      return openMongoStore(mongoSettings(config, use), { log, whenMissing })
    }
  }
}

export interface ServingStore {
  store: Store
  /** Resolves once the store serves and is prepared; rejects with an error that waiting cannot fix. */
  connected: Promise<void>
  /** The server calls it once it listens: SQLite's batches left for serving begin then, holding no step of the start up. */
  listening: () => void
}

/** A server's store, listening whatever the database does: SQLite prepared before this resolves; MongoDB retried in the background (503, `log`). */
export async function openStoreForServing(
  config: Config,
  { log, prepare, ...use }: { log: (message: string) => void; prepare: (store: Store) => Promise<void> } & Pick<StoreUse, 'notify' | 'lost'>
): Promise<ServingStore> {
  let listening = () => {}
  const listened = new Promise<void>((resolve) => (listening = resolve))
  // Each serving process holds a lease: an instance with another configuration does not start beside it.
  const serving: StoreUse = { configuration: 'adopt', instance: thisInstance(), rebuild: 'while-serving', rebuildAfter: listened, ...use }
  switch (config.TRACER_STORE) {
    case 'sqlite': {
      const store = await openStore(config, { whenMissing: 'create-for-demo', ...serving })
      await prepare(store)
      return { store, connected: Promise.resolve(), listening }
    }
    case 'mongodb': {
      const { connectInBackground } = await import('./mongodb/background.js')
      return { ...connectInBackground(mongoSettings(config, serving), { log, prepare }), listening }
    }
  }
}
