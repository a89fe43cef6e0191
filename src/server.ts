import closeWithGrace from 'close-with-grace'
import { buildApp } from './app.js'
import { ensureAdminUser, seedDemoOnFirstStart } from './bootstrap.js'
import type { Config } from './config.js'
import type { ResolvedSecret } from './secret.js'
import { openStoreForServing } from './store/open.js'
import type { Store } from './store/port.js'

/**
 * Opens the store, listens, and closes gracefully on SIGTERM or SIGINT. A MongoDB store that does
 * not answer yet does not hold the listening up: the server is live but not ready until it does.
 */
export async function startServer(config: Config, { secret, generatedFile }: ResolvedSecret) {
  const announce = (line: string) => void process.stdout.write(line + '\n')
  const prepare = async (store: Store) => {
    if (await ensureAdminUser(store, config, announce)) await seedDemoOnFirstStart(store, config, announce)
  }
  // Retries while the database does not answer: to standard error, then warnings in the app's log.
  let warn: (message: string) => void = (message) => process.stderr.write(`${message}\n`)
  const { store, connected } = await openStoreForServing(config, { log: (message) => warn(message), prepare })
  // Bad credentials or data that breaks a unique index: waiting will not help, so stop, saying why.
  connected.catch((error: unknown) => {
    const reason = (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ')
    process.stderr.write(`tracer: cannot use the ${config.TRACER_STORE} store: ${reason}\n`)
    process.exit(1)
  })

  const app = await buildApp({ config: { ...config, JWT_SECRET: secret }, store })
  warn = (message) => app.log.warn(message)
  if (generatedFile !== undefined) {
    app.log.warn(`JWT_SECRET is not set; using the generated secret in ${generatedFile}. Set JWT_SECRET in production.`)
  }
  closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
    if (err !== undefined) app.log.error({ err }, 'closing after an uncaught error')
    else app.log.info({ signal }, 'closing')
    await app.close()
  })
  await app.listen({ port: config.PORT, host: config.HOST })
  return app
}
