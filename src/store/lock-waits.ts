/** How operations wait out another process's lock off the event loop, with one probe however many wait, until a budget (503). */
export interface LockWaitOptions {
  /** How long one operation may wait in all: SQLITE_BUSY_TIMEOUT_MS. */
  budgetMs: number
  /** The store's "another process holds the lock" errors. */
  isLocked: (error: unknown) => boolean
  /** Throws a lock error while the lock is taken; returns once it could be had (and has given it back). */
  probe: () => void
  now?: () => number
  pause?: (ms: number) => Promise<void>
}

/** The first pause after a lock error, doubled up to the last: a short lock costs a few ms, a long one a probe every 50 ms. */
const FIRST_PAUSE_MS = 2
const LONGEST_PAUSE_MS = 50

const pauseFor = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export class LockWaits {
  readonly #options: Required<LockWaitOptions>
  /** The one probing loop while something waits: resolves once the lock was found free. */
  #free: Promise<void> | undefined
  /** Operations waiting now: the probing stops when none is left. */
  #waiting = 0
  /** Operations that met the lock and have not ended yet, and who waits for them all to end. */
  #retrying = 0
  #settled: (() => void)[] = []

  constructor(options: LockWaitOptions) {
    this.#options = { now: () => performance.now(), pause: pauseFor, ...options }
  }

  isLocked(error: unknown): boolean {
    return this.#options.isLocked(error)
  }

  /** `work`, which just failed with the lock error `error`, tried again each time the lock is free, until the budget is spent. */
  async retry<T>(work: () => T | Promise<T>, error: unknown): Promise<T> {
    const { budgetMs, isLocked, now } = this.#options
    const giveUpAt = now() + budgetMs
    this.#retrying++
    try {
      for (;;) {
        if (!(await this.#freeBefore(giveUpAt))) throw error
        try {
          return await work()
        } catch (next) {
          if (!isLocked(next)) throw next
          error = next
        }
      }
    } finally {
      if (--this.#retrying === 0) this.#settled.splice(0).forEach((resolve) => resolve())
    }
  }

  /** Settles once every operation that met the lock has ended: a closing store waits, so a write in flight still lands. */
  settled(): Promise<void> {
    return this.#retrying === 0 ? Promise.resolve() : new Promise((resolve) => this.#settled.push(resolve))
  }

  async #freeBefore(giveUpAt: number): Promise<boolean> {
    const { now, pause } = this.#options
    this.#waiting++
    try {
      this.#free ??= this.#probeUntilFree().finally(() => (this.#free = undefined))
      const free = this.#free.then(() => true)
      for (;;) {
        const left = giveUpAt - now()
        if (left <= 0) return false
        if (await Promise.race([free, pause(Math.min(left, LONGEST_PAUSE_MS)).then(() => false)])) return true
      }
    } finally {
      this.#waiting--
    }
  }

  async #probeUntilFree(): Promise<void> {
    const { isLocked, probe, pause } = this.#options
    for (let wait = FIRST_PAUSE_MS; ; wait = Math.min(wait * 2, LONGEST_PAUSE_MS)) {
      await pause(wait)
      if (this.#waiting === 0) return
      try {
        probe()
        return
      } catch (error) {
        // Anything but the lock (a broken file) is for the retried work to meet and report.
        if (!isLocked(error)) return
      }
    }
  }
}
