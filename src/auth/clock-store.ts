import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit'

type Callback = (error: Error | null, result?: { current: number; ttl: number }) => void

/** @fastify/rate-limit's LocalStore (a window from a key's first hit, the `size` keys used last) on the app's clock, not Date.now. */
export function clockStore(clock: () => number, size = 5000): FastifyRateLimitStoreCtor {
  class ClockStore implements FastifyRateLimitStore {
    /** In the order last used: the first is the one to forget. */
    readonly #windows = new Map<string, { count: number; startMs: number }>()

    incr(key: string, callback: Callback, timeWindow: number): void {
      const now = clock()
      let window = this.#windows.get(key)
      if (window === undefined || window.startMs + timeWindow <= now) window = { count: 1, startMs: now }
      else window.count += 1
      this.#windows.delete(key)
      this.#windows.set(key, window)
      if (this.#windows.size > size) this.#windows.delete(this.#windows.keys().next().value!)
      callback(null, { current: window.count, ttl: timeWindow - (now - window.startMs) })
    }

    /** The counter without counting (`{ increment: false }`). */
    read(key: string, callback: Callback, timeWindow: number): void {
      const now = clock()
      const window = this.#windows.get(key)
      if (window === undefined || window.startMs + timeWindow <= now) return callback(null, { current: 0, ttl: 0 })
      callback(null, { current: window.count, ttl: timeWindow - (now - window.startMs) })
    }

    child(): FastifyRateLimitStore {
      return new ClockStore()
    }
  }
  return ClockStore
}
