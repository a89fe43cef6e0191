import cluster from 'node:cluster'
import type { Config } from '../config.js'

/* Who this process is when WORKERS > 1, and what passes between the primary and its workers. */

/** What the primary sends a worker to have it close as a single server closes on SIGTERM. */
export const DRAIN_MESSAGE = 'frb-tracer:drain'

/** What a worker sends its primary to have it print why the worker cannot serve; the primary answers FATAL_HEARD. */
const FATAL_LINE = 'frb-tracer:fatal-line'
export const FATAL_HEARD = 'frb-tracer:fatal-heard'

/** How long a closing server lets in-flight requests finish before it exits anyway. */
export const CLOSE_GRACE_MS = 10_000

/** A worker whose store cannot be used (bad credentials, a unique index broken): a new one would fail alike, so the service stops. EX_CONFIG. */
export const STORE_UNUSABLE_EXIT_CODE = 78

/** Whether this process is one of several workers behind a primary (WORKERS > 1). */
export const isWorker = cluster.isWorker

/** Whether `serve` makes this process the primary of WORKERS servers rather than the server itself. */
export const becomesPrimary = (config: Config) => config.WORKERS > 1 && cluster.isPrimary

/** Whether the primary prepared the store before forking: SQLite's. On MongoDB each worker does once connected; one `admin` insert wins. */
export const storePreparedByPrimary = (config: Config) => isWorker && config.TRACER_STORE === 'sqlite'

/** The exit status for a store that cannot be used: 1 for a single server, as the README says. */
export const storeUnusableExitCode = () => (isWorker ? STORE_UNUSABLE_EXIT_CODE : 1)

/**
 * In a worker, runs `close` when the primary asks it to drain: by message, since a signal the whole
 * process group also got (Ctrl-C, systemd's default) would be a second one, which ends a server at once.
 */
export function closeWhenPrimaryAsks(close: () => void): void {
  if (!isWorker) return
  process.on('message', (message) => {
    if (message === DRAIN_MESSAGE) close()
  })
}

/** A worker's message carrying the `text` it would have printed to standard error before it exits. */
export const isFatalLine = (message: unknown): message is { kind: typeof FATAL_LINE; text: string } =>
  (message as { kind?: unknown } | null)?.kind === FATAL_LINE && typeof (message as { text?: unknown }).text === 'string'

/**
 * Prints `text` (why this process cannot serve) to standard error and exits with `status`. A worker
 * hands it to its primary, which prints each distinct text once (a reason every worker meets is one
 * line), and prints it itself if the primary does not answer within a second.
 */
export function exitSaying(text: string, status: number): void {
  if (!isWorker || !process.connected) {
    process.stderr.write(text)
    return void process.exit(status)
  }
  const unheard = setTimeout(() => {
    process.stderr.write(text)
    process.exit(status)
  }, 1000)
  process.on('message', (message) => {
    if (message !== FATAL_HEARD) return
    clearTimeout(unheard)
    process.exit(status)
  })
  process.send!({ kind: FATAL_LINE, text })
}
