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

/** How a process uses the store: its configuration (store/configuration.ts), what it is told, when it rebuilds, how it opens. */
export interface StoreUse extends ConfigurationOptions {
  /**
   * When output texts and a kept audit that are due are made again (SQLite, sqlite/kept-audit-rebuild.ts):
   * before the store is handed over unless told otherwise; a server's while it serves (the texts
   * first); the primary of several workers leaves them to the workers after the first batch.
   * MongoDB makes its audit before its store serves, whatever this says (it keeps no texts).
   */
  rebuild?: 'before-open' | 'while-serving' | 'left'
  /** SQLite, `while-serving`: the batches left wait for this (a server's listening) before the first. */
  rebuildAfter?: Promise<void>
  /**
   * `read-only` for a command that only reads (with `read` or `ignore`): SQLite opens the file so
   * that nothing can be written, and refuses a schema older than this code's rather than upgrade it;
   * MongoDB creates no missing index.
   */
  access?: 'read-write' | 'read-only'
}

export interface OpenOptions extends StoreUse {
  /** When there is no store yet; `create` unless told otherwise (see WhenMissing). */
  whenMissing?: WhenMissing
  /** Receives the retries while MongoDB does not answer, for at most a minute. */
  log?: (message: string) => void
}

/** The store chosen by TRACER_STORE, ready to use: for commands, and a SQLite server (whose kept audit may still be made, see StoreUse.rebuild). */
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
  /**
   * The server calls it once it listens: what the start left for while it serves (SQLite's
   * batches of output texts and kept audit) begins then, so none of it runs between the steps of
   * the app's start and holds the listening up.
   */
  listening: () => void
}

/**
 * The store for a server, which listens whatever the database does. SQLite is opened, migrated and
 * prepared before this resolves; output texts and a kept audit it must make again are made while it
 * serves, after one batch at open. MongoDB connects in the background, retrying for as long as it
 * does not answer (each retry goes to `log`); its store answers 503 until then, and `prepare`
 * (start-up work that needs the store) runs once it serves.
 */
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
