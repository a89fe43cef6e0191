// Server-sent events as fragments of a streamed body (streamed-responses.ts): plain SSE, for EventSource or a fetch alike.

/** A comment line: clients ignore it; it keeps proxies from closing a quiet connection. */
export const sseComment = (text: string) => `: ${text}\n\n`

/** A message of a named event; `data` must be one line (JSON text is). */
export const sseMessage = (event: string, data: string) => `event: ${event}\ndata: ${data}\n\n`

export interface EventStreamOptions<T = never> {
  /** Starts what pushes into the stream and resolves to what stops it; a rejection is the response's error. */
  start: () => Promise<() => void>
  opening: string
  /** The most messages held for a client that is not taking them: push refuses beyond, and pushFoldable folds beyond. */
  limit: number
  backlog?: StreamBacklog<T>
  /** The most bytes `backlog` may hold: pushFoldable refuses beyond. */
  backlogBytes?: number
}

/** Items folded for a client that fell behind (verdict-backlog.ts): it grows with what they are about, not with their number. */
export interface StreamBacklog<T> {
  add(items: readonly T[]): void
  /** About what writing everything pending would take. */
  readonly bytes: number
  readonly empty: boolean
  /** The next fragment (one or a few messages) of what is pending, taken from it. */
  take(): StreamFragment
}

/** Text, or a buffer that many streams share (never copied). */
export type StreamFragment = string | Buffer

const DONE: IteratorResult<StreamFragment> = { value: undefined, done: true }
/** The backlog's place in the queue: its messages are made when the client gets there, from all that came meanwhile. */
const BACKLOG = Symbol('backlog')

/** An event stream's body. The first `next` starts it (a response refused its slot starts nothing); `return` stops it at once, even mid-`next`. */
export class EventStreamSource<T = never> implements AsyncIterableIterator<StreamFragment> {
  readonly #options: EventStreamOptions<T>
  #queued: [fragment: StreamFragment | typeof BACKLOG, messages: number][] = []
  #queuedMessages = 0
  /** The backlog is in #queued: every foldable item goes to it until the client gets there. */
  #backlogQueued = false
  #waiting: ((result: IteratorResult<StreamFragment>) => void) | undefined
  #started = false
  #stop: (() => void) | undefined
  #ended = false

  constructor(options: EventStreamOptions<T>) {
    this.#options = options
  }

  [Symbol.asyncIterator]() {
    return this
  }

  /** Queues a fragment of `messages` messages; false, and nothing queued, when that would hold more than `limit`. */
  push(fragment: StreamFragment, messages = 1): boolean {
    if (this.#ended) return true
    const waiting = this.#waiting
    if (waiting !== undefined) {
      this.#waiting = undefined
      waiting({ value: fragment, done: false })
      return true
    }
    if (this.#queuedMessages + messages > this.#options.limit) return false
    this.#queue(fragment, messages)
    return true
  }

  /** As push within `limit`; beyond, items go to the backlog until the client takes it, each thing written once. False past `backlogBytes`. */
  pushFoldable(fragment: StreamFragment, messages: number, items: readonly T[]): boolean {
    if (this.#ended) return true
    const backlog = this.#options.backlog!
    if (!this.#backlogQueued) {
      if (this.#waiting !== undefined || this.#queuedMessages + messages <= this.#options.limit) return this.push(fragment, messages)
      this.#queue(BACKLOG, 0)
    }
    backlog.add(items)
    return backlog.bytes <= (this.#options.backlogBytes ?? Infinity)
  }

  #queue(fragment: StreamFragment | typeof BACKLOG, messages: number) {
    if (fragment === BACKLOG) this.#backlogQueued = true
    this.#queued.push([fragment, messages])
    this.#queuedMessages += messages
  }

  async next(): Promise<IteratorResult<StreamFragment>> {
    if (!this.#started) {
      this.#started = true
      const stop = await this.#options.start()
      if (this.#ended) stop()
      else this.#stop = stop
      return this.#ended ? DONE : { value: this.#options.opening, done: false }
    }
    const oldest = this.#queued.shift()
    if (oldest !== undefined) {
      // The rest stay queued, where they count against the limit, rather than waiting in the body.
      const [fragment, messages] = oldest
      this.#queuedMessages -= messages
      if (fragment !== BACKLOG) return { value: fragment, done: false }
      this.#backlogQueued = false
      const backlog = this.#options.backlog!
      const taken = backlog.take()
      // What was queued behind the backlog goes next: the backlog's turn comes again after it.
      if (!backlog.empty) this.#queue(BACKLOG, 0)
      return { value: taken, done: false }
    }
    if (this.#ended) return DONE
    return new Promise((resolve) => (this.#waiting = resolve))
  }

  async return(): Promise<IteratorResult<StreamFragment>> {
    if (!this.#ended) {
      this.#ended = true
      this.#queued = []
      this.#queuedMessages = 0
      this.#backlogQueued = false
      this.#waiting?.(DONE)
      this.#waiting = undefined
      this.#stop?.()
    }
    return DONE
  }
}
