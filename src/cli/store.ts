import { loadConfig, type Config } from '../config.js'
import type { ConfigurationUse } from '../store/configuration.js'
import { openStore, type StoreUse } from '../store/open.js'
import { StoreMissingError, StoreOutdatedError, type Store } from '../store/port.js'
import type { WhenMissing } from '../store/when-missing.js'
import { CliError } from '../cli-error.js'
import { nativeModuleMismatch } from '../start/start-failures.js'
import type { CliIo } from './io.js'

/** Whether a command only reads, and who hears what opening the store did. */
export interface CommandUse {
  access?: StoreUse['access']
  notify?: (line: string) => void
}

/**
 * Runs `work` on the configured store and closes it. `refuse`: a missing store is an error naming
 * where it was looked for, never an empty one made on the spot. No command changes the store's
 * configuration (store/configuration.ts): `write` refuses other sites or deadlines than the store's,
 * `read` other sites, `ignore` (users only) neither. `read-only` never writes nor upgrades a schema.
 */
export async function withStore<T>(
  io: CliIo,
  whenMissing: Exclude<WhenMissing, 'create-for-demo'>,
  work: (store: Store, config: Config) => Promise<T>,
  configuration: Exclude<ConfigurationUse, 'adopt'> = 'read',
  { access, notify }: CommandUse = {}
): Promise<T> {
  const config = loadConfig(io.env)
  let store: Store
  try {
    store = await openStore(config, { whenMissing, configuration, ...(access && { access }), ...(notify && { notify }) })
  } catch (error) {
    if (error instanceof StoreMissingError) throw new CliError(`${error.message}; nothing was read or written.`)
    if (error instanceof StoreOutdatedError) throw new CliError(error.message)
    throw nativeModuleMismatch(error) ?? error
  }
  try {
    return await work(store, config)
  } finally {
    await store.close()
  }
}
