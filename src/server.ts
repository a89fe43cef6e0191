import closeWithGrace from 'close-with-grace'
import { buildApp } from './app.js'
import { prepareStore } from './bootstrap.js'
import { CLOSE_GRACE_MS, closeWhenPrimaryAsks, exitSaying, isWorker, storePreparedByPrimary, storeUnusableExitCode } from './cluster/roles.js'
import { CliError } from './cli-error.js'
import { cannotListen, type HeldAddress } from './start/listen-address.js'
import { storeFailure } from './start/start-failures.js'
import { holdTickQueueShapes } from './start/tick-queue-shapes.js'
import { ConfigError, type Config } from './config.js'
import type { ResolvedSecret } from './secret.js'
import type { ConfigurationConflictError } from './store/configuration.js'
import { openStoreForServing } from './store/open.js'
import type { Store } from './store/port.js'

/**
 * Opens the store, listens, and closes gracefully on SIGTERM or SIGINT; a MongoDB store that does not answer yet leaves
 * the server live but not ready. `address`, held since before anything was written, is released just before listening.
 */
export async function startServer(config: Config, { secret, generatedFile }: ResolvedSecret, address: HeldAddress) {
  // First, so that none of the start's own collections can free the shapes nextTick's feedback names.
  await holdTickQueueShapes()
  const announce = (line: string) => void process.stdout.write(line + '\n')
  const prepare = storePreparedByPrimary(config) ? async () => {} : (store: Store) => prepareStore(store, config, announce)
  // Retries while the database does not answer: to standard error, then warnings in the app's log.
  let warn: (message: string) => void = (message) => process.stderr.write(`${message}\n`)
  // Another instance took the store over with other settings while this one was suspended past its lease.
  let lost: (error: ConfigurationConflictError) => void = (error) => exitSaying(`tracer: ${error.message}\n`, storeUnusableExitCode())
  const { store, connected, listening } = await openStoreForServing(config, {
    log: (message) => warn(message),
    prepare,
    notify: announce,
    lost: (error) => lost(error)
  }).catch((error: unknown) => {
    // One line, as for a bad setting; a worker exits with 1 and is restarted, since its primary could open this store.
    throw storeFailure(config, error)
  })
  // Bad credentials, data that breaks a unique index, a live instance with other settings: waiting will not help, so stop, saying why.
  connected.catch((error: unknown) => {
    const reason = (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ')
    exitSaying(error instanceof ConfigError ? `tracer: ${reason}\n` : `tracer: cannot use the ${config.TRACER_STORE} store: ${reason}\n`, storeUnusableExitCode())
  })

  const app = await buildApp({ config: { ...config, JWT_SECRET: secret }, store })
  warn = (message) => app.log.warn(message)
  lost = (error) => {
    app.log.error(error.message)
    void app.close().finally(() => exitSaying(`tracer: ${error.message}\n`, storeUnusableExitCode()))
  }
  // Several workers: the primary has said it once.
  if (generatedFile !== undefined && !isWorker) {
    app.log.warn(`JWT_SECRET is not set; using the generated secret in ${generatedFile}. Set JWT_SECRET in production.`)
  }
  let closing = false
  const graceful = closeWithGrace({ delay: CLOSE_GRACE_MS }, async ({ signal, err }) => {
    closing = true
    if (err !== undefined) app.log.error({ err }, 'closing after an uncaught error')
    else app.log.info(signal === undefined ? { askedBy: 'primary' } : { signal }, 'closing')
    const began = performance.now()
    await app.close()
    app.log.info({ ms: Math.round(performance.now() - began) }, 'closed')
  })
  closeWhenPrimaryAsks(() => {
    if (!closing) graceful.close()
  })
  try {
    await address.release()
    await app.listen({ port: config.PORT, host: config.HOST })
    listening()
  } catch (error) {
    // Ends with a status a supervisor acts on, not the graceful close's 0; the store is closed so nothing holds the process.
    graceful.uninstall()
    await app.close()
    throw new CliError(cannotListen(config, error))
  }
  return app
}
