import { StoreUnavailableError } from '../port.js'
import { asStoreError } from './errors.js'

/** How start-up waits for a database that does not answer yet. */
export interface Backoff {
  firstDelayMs: number
  maxDelayMs: number
  /** Start-up gives up once the next wait would end later than this after the first attempt. */
  totalMs: number
}

/**
 * 0.5 s, 1 s, 2 s ... capped at 8 s, for at most a minute: long enough for a database that starts
 * beside the service, short enough that a wrong address fails the deployment visibly. Each attempt
 * itself waits up to the server selection timeout.
 */
export const STARTUP_BACKOFF: Backoff = { firstDelayMs: 500, maxDelayMs: 8_000, totalMs: 60_000 }

/** The clock, the wait and the log line: injected, so tests need no real time. */
export interface StartupTools {
  now(): number
  sleep(ms: number): Promise<void>
  log(message: string): void
}

export const realTime: Pick<StartupTools, 'now' | 'sleep'> = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms))
}

/**
 * Runs `attempt` until it succeeds, retrying with exponential backoff while the database is
 * unreachable. Any other error (bad credentials, an index the data breaks) fails at once.
 */
export async function retryWhileUnavailable<T>(attempt: () => Promise<T>, backoff: Backoff, tools: StartupTools): Promise<T> {
  const started = tools.now()
  let delay = backoff.firstDelayMs
  for (let attempts = 1; ; attempts++) {
    try {
      return await attempt()
    } catch (error) {
      const mapped = asStoreError(error)
      if (!(mapped instanceof StoreUnavailableError)) throw error
      const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error)
      if (tools.now() - started + delay > backoff.totalMs) {
        throw new StoreUnavailableError(`MongoDB is unreachable; gave up after ${attempts} attempts (${reason})`, { cause: error })
      }
      tools.log(`MongoDB is unreachable (attempt ${attempts}, ${reason}); retrying in ${delay} ms`)
      await tools.sleep(delay)
      delay = Math.min(delay * 2, backoff.maxDelayMs)
    }
  }
}
