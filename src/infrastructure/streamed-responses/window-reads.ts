import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

declare module 'fastify' {
  interface FastifyInstance {
    windowReads: FairTurns
  }
}

type EndTurn = () => void

// Every expensive read goes through here, `concurrency` at a time, each user's in their own line and the lines taking turns, so one
// user's sixty reports delay another's one by a page each. A turn covers one read, never a client's reading.
export class FairTurns {
  #running = 0
  #spent = 0
  #spentSince = 0
  /** The waiting, by user; a Map keeps insertion order, so it is the round: a user served goes to its back. */
  readonly #lines = new Map<string, ((end: EndTurn) => void)[]>()
  #granting = false

  /** `budgetMs`: turns given at once in any BUDGET_PERIOD_MS; past it, one a round of the event loop. By the clock: a setImmediate a read slows all. */
  constructor(
    readonly concurrency: number,
    readonly budgetMs = BUDGET_MS
  ) {}

  get running(): number {
    return this.#running
  }

  get waiting(): number {
    let count = 0
    for (const line of this.#lines.values()) count += line.length
    return count
  }

  /** Resolves to what ends the turn once `owner` may read one page. */
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

// A /health probe waits a few tens of milliseconds at most; ordinary reads (a fraction of a millisecond) never wait.
const BUDGET_MS = 20
export const BUDGET_PERIOD_MS = 50

// SQLite reads on this thread (two at once would only take turns); MongoDB's wait on the network.
const WINDOW_READS_AT_ONCE = { sqlite: 1, mongodb: 4 } as const

async function windowReads(fastify: FastifyInstance) {
  fastify.decorate('windowReads', new FairTurns(WINDOW_READS_AT_ONCE[fastify.store.kind]))
}

export default fp(windowReads, { name: 'window-reads', fastify: '5.x', decorators: { fastify: ['store'] } })
