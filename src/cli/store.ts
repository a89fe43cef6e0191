import { loadConfig, type Config } from '../config.js'
import { openStore } from '../store/open.js'
import { StoreMissingError, type Store } from '../store/port.js'
import type { WhenMissing } from '../store/when-missing.js'
import { CliError } from './cli-error.js'
import type { CliIo } from './io.js'

/**
 * Runs `work` on the configured store (the same one a running server uses) and closes it. A
 * command that only reads, or changes what exists, says `refuse`: a store that is not there is then
 * an error naming where it was looked for, never an empty one made on the spot.
 */
export async function withStore<T>(io: CliIo, whenMissing: Exclude<WhenMissing, 'create-for-demo'>, work: (store: Store, config: Config) => Promise<T>): Promise<T> {
  const config = loadConfig(io.env)
  let store: Store
  try {
    store = await openStore(config, { whenMissing })
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
