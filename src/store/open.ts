import type { Config } from '../config.js'
import { ConfigError } from '../config.js'
import type { Store } from './port.js'
import { SqliteStore } from './sqlite/store.js'

/** Start-up messages before the app (and its logger) exists go to standard error. */
const toStderr = (message: string) => void process.stderr.write(`${message}\n`)

/** The store chosen by TRACER_STORE; `log` receives start-up retries while MongoDB does not answer. */
export async function openStore(config: Config, log: (message: string) => void = toStderr): Promise<Store> {
  switch (config.TRACER_STORE) {
    case 'sqlite':
      return SqliteStore.open(config.TRACER_DB, { busyTimeoutMs: config.SQLITE_BUSY_TIMEOUT_MS })
    case 'mongodb':
      // loadConfig requires it with mongodb; a Config built by hand may still lack it.
      if (config.MONGODB_URL === undefined) throw new ConfigError('Invalid configuration: MONGODB_URL is required when TRACER_STORE=mongodb')
      {
        // Loaded on demand: the driver is most of a start-up's module loading, and SQLite needs none of it.
        const { openMongoStore } = await import('./mongodb/connect.js')
        return openMongoStore({ url: config.MONGODB_URL, dbName: config.MONGODB_DB }, { log })
      }
  }
}
