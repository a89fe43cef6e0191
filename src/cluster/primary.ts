import { pino } from 'pino'
import { prepareStore } from '../bootstrap.js'
import type { HeldAddress } from '../start/listen-address.js'
import { storeFailure } from '../start/start-failures.js'
import type { Config } from '../config.js'
import type { ResolvedSecret } from '../secret.js'
import { openStore } from '../store/open.js'
import { serveClusterMetrics } from '../infrastructure/cluster-metrics.js'
import { WorkerPool } from './pool.js'

/**
 * `serve` with WORKERS > 1. This process does the start-up work that must happen once (the caller
 * has resolved the JWT secret file; a SQLite store is opened, migrated and given its first admin
 * and demo data here, then closed), then becomes the primary of WORKERS server processes sharing
 * its port, each running what a single `serve` runs. It restarts a worker that dies, and on SIGTERM
 * or SIGINT drains them all and exits. `address`, held since before anything was written, is
 * released just before the workers start: they listen on the port through this process.
 */
export async function runPrimary(config: Config, { generatedFile }: ResolvedSecret, address: HeldAddress): Promise<void> {
  const log = pino({ level: config.LOG_LEVEL })
  if (config.TRACER_STORE === 'sqlite') await prepareSqliteStore(config)
  if (generatedFile !== undefined) {
    log.warn(`JWT_SECRET is not set; using the generated secret in ${generatedFile}. Set JWT_SECRET in production.`)
  }

  const pool = new WorkerPool(config.WORKERS, log)
  let closing = false
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (closing) {
        log.error({ signal }, 'second signal: killing the workers')
        return pool.kill()
      }
      closing = true
      log.info({ signal }, 'closing')
      pool.stop()
    })
  }
  // Between this and the first worker's listen (its start-up, under a second) another process
  // could take the port: the workers then fail to listen and the service stops, as it did before
  // this check. Holding the socket on would make the workers' own bind fail.
  await address.release()
  serveClusterMetrics()
  pool.start()
  void pool.finished.then((status) => process.exit(status))
}

/** What a single server does before it listens, done once so that the workers find it done. */
async function prepareSqliteStore(config: Config): Promise<void> {
  try {
    // The workers make output texts and a kept audit that are due while they serve: here they would hold their listening up.
    const store = await openStore(config, { whenMissing: 'create-for-demo', rebuild: 'left' })
    try {
      await prepareStore(store, config, (line) => void process.stdout.write(line + '\n'))
    } finally {
      await store.close()
    }
  } catch (error) {
    throw storeFailure(config, error)
  }
}
