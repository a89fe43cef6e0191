/**
 * Server-sent events as text fragments of a streamed body (see streamed-responses.ts): plain
 * standard SSE, so EventSource and a fetch reading the body line by line both understand it.
 */

/** A comment line: clients ignore it; it keeps proxies from closing a quiet connection. */
export const sseComment = (text: string) => `: ${text}\n\n`

/** A message of a named event; `data` must be one line (JSON text is). */
export const sseMessage = (event: string, data: string) => `event: ${event}\ndata: ${data}\n\n`

export interface EventStreamOptions<T = never> {
  /** Starts what pushes into the stream and resolves to what stops it; a rejection is the response's error. */
  start: () => Promise<() => void>
  /** The first fragment, given once `start` has resolved. */
  opening: string
  /** The most messages held for a client that is not taking them: push refuses beyond, and pushFoldable folds beyond. */
  limit: number
  /** Where pushFoldable's items go once `limit` messages are queued (see StreamBacklog). */
  backlog?: StreamBacklog<T>
  /** The most bytes `backlog` may hold: pushFoldable refuses beyond. */
  backlogBytes?: number
}

/**
 * Items a stream folds together for a client that fell behind (verdict-backlog.ts): what it holds
 * grows with the things the items are about, not with their number, so a burst of any size costs
 * a client that reads a few messages instead of its stream.
 */
export interface StreamBacklog<T> {
  add(items: readonly T[]): void
  /** About what writing everything pending would take. */
  readonly bytes: number
  readonly empty: boolean
  /** The next fragment (one or a few messages) of what is pending, taken from it. */
  take(): StreamFragment
}

/** Text, or a buffer that many streams share (made once, written to each socket as it is). */
export type StreamFragment = string | Buffer

const DONE: IteratorResult<StreamFragment> = { value: undefined, done: true }
/** The backlog's place in the queue: its messages are made when the client gets there, from all that came meanwhile. */
const BACKLOG = Symbol('backlog')

/**
 * The body of an event stream: fragments pushed as events happen, held until the socket asks for
 * more, each handed on as it was pushed (a shared buffer is never copied). The first `next` starts
 * the stream, so a response refused before it (its slot not free) starts nothing. `return` (the
 * response closed, the client left, the server shuts down) stops it at once, even while `next`
 * waits for an event.
 */
export class EventStreamSource<T = never> implements AsyncIterableIterator<StreamFragment> {
  readonly #options: EventStreamOptions<T>
  #queued: (StreamFragment | typeof BACKLOG)[] = []
  /** Messages in #queued, which the limit counts. */
  #queuedMessages = 0
  #counts: number[] = []
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

  /**
   * Queues a fragment of `messages` messages made of `items`, as push does while the client keeps
   * within `limit`; beyond it the items go to the backlog instead, and so do all that come until
   * the client has taken the backlog, so each thing they are about is written once, as it stands
   * then. False when the backlog holds more than `backlogBytes`: a client that stops reading.
   */
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
    this.#queued.push(fragment)
    this.#counts.push(messages)
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
      this.#queuedMessages -= this.#counts.shift()!
      if (oldest !== BACKLOG) return { value: oldest, done: false }
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
      this.#counts = []
      this.#queuedMessages = 0
      this.#backlogQueued = false
      this.#waiting?.(DONE)
      this.#waiting = undefined
      this.#stop?.()
    }
    return DONE
  }
}
