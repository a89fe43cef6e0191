import { setTimeout } from 'node:timers/promises'
import { StoreUnavailableError } from '../port.js'
import { asStoreError } from './driver-errors.js'

/** How start-up waits for a database that does not answer yet. */
export interface Backoff {
  firstDelayMs: number
  maxDelayMs: number
  /** Gives up once the next wait would end later than this after the first attempt; unset: never. */
  totalMs?: number
}

/**
 * A server waits for its database for as long as it takes, 0.5 s, 1 s, 2 s ... then every 8 s: it
 * listens meanwhile (not ready), so an orchestrator sees a live instance rather than a crash loop.
 * Each attempt itself waits up to the server selection timeout.
 */
export const SERVE_BACKOFF: Backoff = { firstDelayMs: 500, maxDelayMs: 8_000 }

/**
 * A command run by hand (users, import) waits at most a minute: long enough for a database that is
 * starting, short enough that a wrong address fails visibly.
 */
export const COMMAND_BACKOFF: Backoff = { ...SERVE_BACKOFF, totalMs: 60_000 }

/** The clock, the wait and the log line: injected, so tests need no real time. */
export interface StartupTools {
  now(): number
  /** Rejects with the signal's reason once it is aborted. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>
  log(message: string): void
}

export const realTime: Pick<StartupTools, 'now' | 'sleep'> = {
  now: () => Date.now(),
  sleep: (ms, signal) => setTimeout(ms, undefined, { signal })
}

/**
 * Runs `attempt` until it succeeds, retrying with exponential backoff while the database is
 * unreachable. Any other error (bad credentials, an index the data breaks) fails at once, and so
 * does aborting `signal`, which also ends a wait.
 */
export async function retryWhileUnavailable<T>(
  attempt: () => Promise<T>,
  backoff: Backoff,
  tools: StartupTools,
  signal?: AbortSignal
): Promise<T> {
  const started = tools.now()
  let delay = backoff.firstDelayMs
  for (let attempts = 1; ; attempts++) {
    signal?.throwIfAborted()
    try {
      return await attempt()
    } catch (error) {
      // Stopped while the attempt ran: its failure (often that very stop) is no reason to go on.
      signal?.throwIfAborted()
      const mapped = asStoreError(error)
      if (!(mapped instanceof StoreUnavailableError)) throw error
      const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error)
      if (backoff.totalMs !== undefined && tools.now() - started + delay > backoff.totalMs) {
        throw new StoreUnavailableError(`MongoDB is unreachable; gave up after ${attempts} attempts (${reason})`, { cause: error })
      }
      tools.log(`MongoDB is unreachable (attempt ${attempts}, ${reason}); retrying in ${delay} ms`)
      await tools.sleep(delay, signal)
      delay = Math.min(delay * 2, backoff.maxDelayMs)
    }
  }
}
