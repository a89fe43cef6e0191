import { becomesPrimary } from '../cluster/roles.js'
import { loadConfig } from '../config.js'
import { resolveJwtSecret, type ResolvedSecret } from '../secret.js'
import { holdListenAddress } from '../start/listen-address.js'
import { secretFailure } from '../start/start-failures.js'

/** `tracer serve`: checks the configuration and the address before it writes anything, so that a start that cannot serve leaves nothing. */
export async function serve(env: NodeJS.ProcessEnv): Promise<void> {
  // A bad configuration stops start-up before the service's modules are even loaded.
  const config = loadConfig(env)
  const address = await holdListenAddress(config)
  try {
    let secret: ResolvedSecret
    try {
      secret = resolveJwtSecret(config)
    } catch (error) {
      throw secretFailure(error)
    }
    // Loaded on demand, so that the other commands start in a blink.
    if (becomesPrimary(config)) {
      const { runPrimary } = await import('../cluster/primary.js')
      return await runPrimary(config, secret, address)
    }
    const { startServer } = await import('../server.js')
    await startServer(config, secret, address)
  } finally {
    // Released by now unless the start failed before it listened.
    await address.release()
  }
}
