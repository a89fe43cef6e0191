import closeWithGrace from 'close-with-grace'
import { buildApp } from './app.js'
import { ensureAdminUser, seedDemoOnFirstStart } from './bootstrap.js'
import type { Config } from './config.js'
import type { ResolvedSecret } from './secret.js'
import { openStore } from './store/open.js'

/** Opens the store, listens, and closes gracefully on SIGTERM or SIGINT. */
export async function startServer(config: Config, { secret, generatedFile }: ResolvedSecret) {
  const store = await openStore(config)
  const announce = (line: string) => void process.stdout.write(line + '\n')
  if (await ensureAdminUser(store, config, announce)) await seedDemoOnFirstStart(store, config, announce)
  const app = await buildApp({ config: { ...config, JWT_SECRET: secret }, store })
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
