import type { Config } from '../config.js'
import { ConfigError } from '../config.js'
import type { Store } from './port.js'
import { SqliteStore } from './sqlite/store.js'

/** The store chosen by TRACER_STORE. */
export async function openStore(config: Config): Promise<Store> {
  switch (config.TRACER_STORE) {
    case 'sqlite':
      return SqliteStore.open(config.TRACER_DB)
    case 'mongodb':
      throw new ConfigError('Invalid configuration: TRACER_STORE=mongodb is not available in this version yet')
  }
}
