import type { FastifyBaseLogger } from 'fastify'

export interface FeedListener<T> {
  /** Must not block; a promise holds the next read back until it settles, so a backlog is read no faster than it is handed out. */
  deliver(items: readonly T[]): void | Promise<void>
}

export type FeedHubOptions = { pollIntervalMs?: number; pageSize?: number }

/** A store feed read by position (TransitionFeed, VerdictFeed). */
export interface ItemFeed<T> {
  position(): Promise<number>
  since(position: number, limit: number): Promise<{ items: readonly T[]; position: number }>
}

/** Well within the 2 s an item may take to reach a stream, at 4 indexed reads a second. */
const POLL_INTERVAL_MS = 250
/** A page becomes one write to each stream that wants part of it: under a burst, larger pages mean fewer writes (500 is about 90 KB). */
const PAGE_SIZE = 500

/** The reading of the feed, from the first stream opened to the last closed. */
interface Polling {
  /** Settles once the feed's position is known: from then on, every item written reaches the listeners. */
  ready: Promise<void>
  position: number
  timer: NodeJS.Timeout | undefined
  stopped: boolean
  /** The last read failed: the outage is logged once, not at every tick. */
  failing: boolean
}

// One reader of a store feed per process, none while no stream is open. Items come from the store, where every instance's writes end
// up, read by position, so a poll costs the same however much history there is.
export class FeedHub<T> {
  readonly #feed: ItemFeed<T>
  readonly #log: FastifyBaseLogger
  /** As the log names them: `transitions`, `verdict changes`. */
  readonly #items: string
  readonly #pollIntervalMs: number
  readonly #pageSize: number
  readonly #listeners = new Set<FeedListener<T>>()
  #polling: Polling | undefined

  constructor(feed: ItemFeed<T>, log: FastifyBaseLogger, items: string, { pollIntervalMs = POLL_INTERVAL_MS, pageSize = PAGE_SIZE }: FeedHubOptions = {}) {
    this.#feed = feed
    this.#log = log
    this.#items = items
    this.#pollIntervalMs = pollIntervalMs
    this.#pageSize = pageSize
  }

  get listeners(): number {
    return this.#listeners.size
  }

  get polling(): boolean {
    return this.#polling !== undefined
  }

  /** Resolves to what removes the listener once every item written from then on reaches it; rejects (removed) when the position is unknown. */
  async listen(listener: FeedListener<T>): Promise<() => void> {
    this.#listeners.add(listener)
    const polling = (this.#polling ??= this.#startPolling())
    try {
      await polling.ready
    } catch (error) {
      this.#remove(listener)
      throw error
    }
    let listening = true
    return () => {
      if (!listening) return
      listening = false
      this.#remove(listener)
    }
  }

  /** The app's streams have ended by then (they end before the app closes). */
  close() {
    this.#listeners.clear()
    this.#stop()
  }

  #remove(listener: FeedListener<T>) {
    this.#listeners.delete(listener)
    if (this.#listeners.size === 0) this.#stop()
  }

  #stop() {
    const polling = this.#polling
    if (polling === undefined) return
    polling.stopped = true
    clearTimeout(polling.timer)
    this.#polling = undefined
  }

  #startPolling(): Polling {
    const polling: Polling = { ready: Promise.resolve(), position: 0, timer: undefined, stopped: false, failing: false }
    polling.ready = this.#feed.position().then(
      (position) => {
        polling.position = position
        this.#next(polling, this.#pollIntervalMs)
      },
      (error: unknown) => {
        // Whoever opens the next stream asks the store again.
        if (this.#polling === polling) this.#stop()
        throw error
      }
    )
    return polling
  }

  #next(polling: Polling, delayMs: number) {
    if (polling.stopped) return
    polling.timer = setTimeout(() => void this.#poll(polling), delayMs)
  }

  async #poll(polling: Polling) {
    let full = false
    try {
      const page = await this.#feed.since(polling.position, this.#pageSize)
      if (polling.stopped) return
      polling.position = page.position
      if (polling.failing) {
        polling.failing = false
        this.#log.info(`live streams: reading new ${this.#items} from the store again`)
      }
      if (page.items.length > 0) await this.#fanOut(page.items)
      full = page.items.length >= this.#pageSize
    } catch (error) {
      if (polling.stopped) return
      if (!polling.failing) {
        polling.failing = true
        this.#log.warn({ err: error }, `live streams: cannot read new ${this.#items} from the store; trying again every ${this.#pollIntervalMs} ms, streams stay open`)
      }
    }
    // A backlog (after an outage, or a burst of writes) is read a page a turn of the event loop.
    this.#next(polling, full ? 0 : this.#pollIntervalMs)
  }

  async #fanOut(items: readonly T[]) {
    const handedOut: Promise<void>[] = []
    const failed = (error: unknown) => this.#log.error({ err: error }, `live streams: a listener failed to take ${this.#items}`)
    for (const listener of this.#listeners) {
      try {
        const delivered = listener.deliver(items)
        if (delivered !== undefined) handedOut.push(delivered.catch(failed))
      } catch (error) {
        // One listener's failure is its own: the others still get the items.
        failed(error)
      }
    }
    await Promise.all(handedOut)
  }
}
