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
 * `serve` with WORKERS > 1: the start-up work that must happen once (a SQLite store prepared, then
 * closed), then the primary of WORKERS servers on its port, which restarts a worker that dies and
 * drains them all on SIGTERM or SIGINT.
 */
export async function runPrimary(config: Config, { generatedFile }: ResolvedSecret, address: HeldAddress): Promise<void> {
  const log = pino({ level: config.LOG_LEVEL })
  if (config.TRACER_STORE === 'sqlite') await prepareSqliteStore(config)
  if (generatedFile !== undefined) log.warn(`JWT_SECRET is not set; using the generated secret in ${generatedFile}. Set JWT_SECRET in production.`)

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
  // The workers listen through this process, so holding the socket on would fail their bind. Another
  // process could take the port until then: the workers then fail to listen and the service stops.
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
