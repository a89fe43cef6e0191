import { loadConfig, type Config } from '../config.js'
import type { ConfigurationUse } from '../store/configuration.js'
import { openStore } from '../store/open.js'
import { StoreMissingError, type Store } from '../store/port.js'
import type { WhenMissing } from '../store/when-missing.js'
import { CliError } from '../cli-error.js'
import type { CliIo } from './io.js'

/** Who hears what opening the store did. */
export interface CommandUse {
  notify?: (line: string) => void
}

/**
 * Runs `work` on the configured store (the same one a running server uses) and closes it. A
 * command that only reads, or changes what exists, says `refuse`: a store that is not there is then
 * an error naming where it was looked for, never an empty one made on the spot. No command changes
 * the store's configuration (TRACER_SITES, STAGE_DEADLINES; see store/configuration.ts): one that
 * writes records (`write`) with another configuration than the store's, or reads (`read`, the
 * default) with other sites, is refused with one line naming the setting and both values; one
 * that reads only users (`ignore`) depends on neither.
 */
export async function withStore<T>(
  io: CliIo,
  whenMissing: Exclude<WhenMissing, 'create-for-demo'>,
  work: (store: Store, config: Config) => Promise<T>,
  configuration: Exclude<ConfigurationUse, 'adopt'> = 'read',
  { notify }: CommandUse = {}
): Promise<T> {
  const config = loadConfig(io.env)
  let store: Store
  try {
    store = await openStore(config, { whenMissing, configuration, ...(notify === undefined ? {} : { notify }) })
  } catch (error) {
    if (error instanceof StoreMissingError) throw new CliError(`${error.message}; nothing was read or written.`)
    throw error
  }
  try {
    return await work(store, config)
  } finally {
    await store.close()
  }
}
