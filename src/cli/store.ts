import { loadConfig, type Config } from '../config.js'
import type { ConfigurationUse } from '../store/configuration.js'
import { openStore, type StoreUse } from '../store/open.js'
import { StoreMissingError, StoreOutdatedError, type Store } from '../store/port.js'
import type { WhenMissing } from '../store/when-missing.js'
import { CliError } from '../cli-error.js'
import { nativeModuleMismatch } from '../start/native-module.js'
import type { CliIo } from './io.js'

/** Whether a command only reads, and who hears what opening the store did. */
export interface CommandUse {
  access?: StoreUse['access']
  notify?: (line: string) => void
}

/**
 * Runs `work` on the configured store (the same one a running server uses) and closes it. A
 * command that only reads, or changes what exists, says `refuse`: a store that is not there is then
 * an error naming where it was looked for, never an empty one made on the spot. No command changes
 * the store's configuration (TRACER_SITES, STAGE_DEADLINES; see store/configuration.ts): one that
 * writes records (`write`) with another configuration than the store's, or reads (`read`, the
 * default) with other sites, is refused with one line naming the setting and both values; one
 * that reads only users (`ignore`) depends on neither. One that only reads says `read-only`: it
 * never writes, nor upgrades an older store's schema, and refuses one in one line.
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
    store = await openStore(config, { whenMissing, configuration, ...(access === undefined ? {} : { access }), ...(notify === undefined ? {} : { notify }) })
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
