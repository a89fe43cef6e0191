/**
 * Server-sent events as text fragments of a streamed body (see streamed-responses.ts): plain
 * standard SSE, so EventSource and a fetch reading the body line by line both understand it.
 */

/** A comment line: clients ignore it; it keeps proxies from closing a quiet connection. */
export const sseComment = (text: string) => `: ${text}\n\n`

/** A message of a named event; `data` must be one line (JSON text is). */
export const sseMessage = (event: string, data: string) => `event: ${event}\ndata: ${data}\n\n`

export interface EventStreamOptions {
  /** Starts what pushes into the stream and resolves to what stops it; a rejection is the response's error. */
  start: () => Promise<() => void>
  /** The first fragment, given once `start` has resolved. */
  opening: string
  /** The most messages held for a client that is not taking them: push refuses beyond. */
  limit: number
}

/** Text, or a buffer that many streams share (made once, written to each socket as it is). */
export type StreamFragment = string | Buffer

const DONE: IteratorResult<StreamFragment> = { value: undefined, done: true }

/**
 * The body of an event stream: fragments pushed as events happen, held until the socket asks for
 * more, each handed on as it was pushed (a shared buffer is never copied). The first `next` starts
 * the stream, so a response refused before it (its slot not free) starts nothing. `return` (the
 * response closed, the client left, the server shuts down) stops it at once, even while `next`
 * waits for an event.
 */
export class EventStreamSource implements AsyncIterableIterator<StreamFragment> {
  readonly #options: EventStreamOptions
  #queued: StreamFragment[] = []
  /** Messages in #queued, which the limit counts. */
  #queuedMessages = 0
  #counts: number[] = []
  #waiting: ((result: IteratorResult<StreamFragment>) => void) | undefined
  #started = false
  #stop: (() => void) | undefined
  #ended = false

  constructor(options: EventStreamOptions) {
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
    this.#queued.push(fragment)
    this.#counts.push(messages)
    this.#queuedMessages += messages
    return true
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
      return { value: oldest, done: false }
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
      this.#waiting?.(DONE)
      this.#waiting = undefined
      this.#stop?.()
    }
    return DONE
  }
}
