import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

declare module 'fastify' {
  interface FastifyInstance {
    /** The turns every page read of a window report waits for (see FairTurns). */
    windowReads: FairTurns
  }
}

/** A turn given back: the next one goes to whoever is due. */
export type EndTurn = () => void

/**
 * The queue every expensive read goes through: the pages of window reports (baseband callbacks,
 * the audit of a window, stage latency) and the reads of one event's parts (event status, its
 * audit, its heartbeats and history) and the batch read of events by number, `concurrency` at a
 * time, shared fairly between users.
 * Each user's pages wait in their own line and the lines take turns, so one user's sixty reports
 * delay another user's one by a page each, not by sixty reports. A turn given back passes to the
 * next after a turn of the event loop, so every other request is answered between two pages. A
 * turn covers one page read, never a client's reading: a response whose client stops reading holds
 * no turn. The line is bounded by the reports in flight (MAX_STREAMED_RESPONSES), each of which
 * waits for one page at a time.
 */
export class FairTurns {
  #running = 0
  /** Time spent in turns given at once since `#spentSince`. */
  #spent = 0
  #spentSince = 0
  /** The waiting, by user; a Map keeps insertion order, so it is the round: a user served goes to its back. */
  readonly #lines = new Map<string, ((end: EndTurn) => void)[]>()
  #granting = false

  /**
   * `budgetMs`: turns given at once take at most about this long together in any BUDGET_PERIOD_MS;
   * past it, turns wait in line and are given one round of the event loop at a time, so requests
   * that arrived meanwhile (a /health probe) are answered between two of them. Kept by the clock,
   * not by a callback each round: a setImmediate for every request would slow even a lone client's reads.
   */
  constructor(
    readonly concurrency: number,
    readonly budgetMs = BUDGET_MS
  ) {}

  /** Page reads under way. */
  get running(): number {
    return this.#running
  }

  /** Page reads waiting for their turn. */
  get waiting(): number {
    let count = 0
    for (const line of this.#lines.values()) count += line.length
    return count
  }

  /** Resolves when `owner` may read one page; call the function it resolves to once the page is read. */
  turn(owner: string): Promise<EndTurn> {
    return new Promise((resolve) => {
      const free = this.#running < this.concurrency && this.#lines.size === 0 && !this.#granting
      if (free && this.#withinBudget()) return resolve(this.#start())
      const line = this.#lines.get(owner)
      if (line === undefined) this.#lines.set(owner, [resolve])
      else line.push(resolve)
      // Over budget with nothing running, no turn's end would give it: the next round does.
      if (this.#running < this.concurrency) this.#grantSoon()
    })
  }

  /** Runs `read` in a turn of `owner`'s. */
  async run<T>(owner: string, read: () => Promise<T>): Promise<T> {
    const end = await this.turn(owner)
    try {
      return await read()
    } finally {
      end()
    }
  }

  #start(): EndTurn {
    this.#running++
    let held = true
    const started = performance.now()
    return () => {
      if (!held) return
      held = false
      this.#running--
      this.#spent += performance.now() - started
      this.#grantSoon()
    }
  }

  #withinBudget(): boolean {
    if (performance.now() - this.#spentSince >= BUDGET_PERIOD_MS) {
      this.#spentSince = performance.now()
      this.#spent = 0
    }
    return this.#spent < this.budgetMs
  }

  #grantSoon() {
    if (this.#granting || this.#lines.size === 0) return
    this.#granting = true
    setImmediate(() => {
      this.#granting = false
      this.#grant()
    })
  }

  #grant() {
    while (this.#running < this.concurrency) {
      const first = this.#lines.entries().next()
      if (first.done === true) return
      const [owner, line] = first.value
      const next = line.shift()!
      this.#lines.delete(owner)
      if (line.length > 0) this.#lines.set(owner, line)
      next(this.#start())
    }
  }
}

/**
 * Time turns given at once may take in BUDGET_PERIOD_MS before the rest wait for a round of the
 * event loop each: small enough that a /health probe waits a few tens of milliseconds at most,
 * large enough that ordinary reads (a fraction of a millisecond each) never wait.
 */
export const BUDGET_MS = 20
export const BUDGET_PERIOD_MS = 50

/**
 * Pages read at once: one on SQLite, whose reads run on this thread (two at once would only take
 * turns inside one turn of the event loop); a few on MongoDB, whose reads wait on the network.
 */
export const WINDOW_READS_AT_ONCE = { sqlite: 1, mongodb: 4 } as const

async function windowReads(fastify: FastifyInstance) {
  fastify.decorate('windowReads', new FairTurns(WINDOW_READS_AT_ONCE[fastify.store.kind]))
}

export default fp(windowReads, { name: 'window-reads', fastify: '5.x', decorators: { fastify: ['store'] } })
