import { loadConfig, type Config } from '../config.js'
import { openStore } from '../store/open.js'
import type { Store } from '../store/port.js'
import type { CliIo } from './io.js'

/** Runs `work` on the configured store (the same one a running server uses) and closes it. */
export async function withStore<T>(io: CliIo, work: (store: Store, config: Config) => Promise<T>): Promise<T> {
  const config = loadConfig(io.env)
  const store = await openStore(config)
  try {
    return await work(store, config)
  } finally {
    await store.close()
  }
}
