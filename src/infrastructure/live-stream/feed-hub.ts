import type { FastifyBaseLogger } from 'fastify'

/** What the hub hands each page of its feed to: the live streams' fan-out (stream-fan-out.ts). */
export interface FeedListener<T> {
  /**
   * The items of one read, in the order written; must not block (the streams queue them for their
   * clients). A promise holds the next read back until it settles: a backlog is read no faster than
   * it is handed out.
   */
  deliver(items: readonly T[]): void | Promise<void>
}

export interface FeedHubOptions {
  /** How often the store is asked for new items while a stream is open. */
  pollIntervalMs?: number
  /** Items read at a time; a full page is followed at once by the next. */
  pageSize?: number
}

/** A store feed read by position (TransitionFeed, VerdictFeed), as the hub reads it. */
export interface ItemFeed<T> {
  position(): Promise<number>
  since(position: number, limit: number): Promise<{ items: readonly T[]; position: number }>
}

/** A quarter of a second between reads: well within the 2 s an item may take to reach a stream, at 4 indexed reads a second. */
export const POLL_INTERVAL_MS = 250
/**
 * Transitions read at a time. Each page is handed over whole and becomes one write to each stream
 * that wants part of it, so under a burst of writes a larger page costs the streams fewer writes;
 * 500 is about 90 KB of messages.
 */
const PAGE_SIZE = 500

/** The reading of the feed while streams are open: begun when the first opens, ended when the last closes. */
interface Polling {
  /** Settles once the feed's position is known: from then on, every transition written reaches the listeners. */
  ready: Promise<void>
  position: number
  timer: NodeJS.Timeout | undefined
  stopped: boolean
  /** The last read failed: the outage is logged once, not at every tick. */
  failing: boolean
}

/**
 * One reader of a store feed per process, whatever the number of streams. Several instances share
 * the store, so an item (a transition, a verdict change) is delivered from the store, where every
 * instance's writes end up, not from the memory of the process that wrote it. The feed is read by
 * position (on SQLite one indexed range scan by sequence number), so a poll costs the same however
 * much history there is, and nothing is read while no stream is open.
 */
export class FeedHub<T> {
  readonly #feed: ItemFeed<T>
  readonly #log: FastifyBaseLogger
  /** What the feed carries, as the log names it: `transitions`, `verdict changes`. */
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

  /** Streams listening now. */
  get listeners(): number {
    return this.#listeners.size
  }

  /** Whether the feed is being read (exactly while a stream is open). */
  get polling(): boolean {
    return this.#polling !== undefined
  }

  /**
   * Adds a listener. Resolves, with the function that removes it, once the hub knows where the
   * feed stands, so every item written from then on reaches it; rejects (the listener
   * removed) when the store cannot say, such as StoreUnavailableError.
   */
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

  /** Stops reading the feed; the app's streams have ended by then (they end before the app closes). */
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
