import { CHUNK_BYTES } from './pulled-body.js'

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
  /** The most fragments held for a client that is not taking them: push refuses beyond. */
  limit: number
}

const DONE: IteratorResult<string> = { value: undefined, done: true }

/**
 * The body of an event stream: fragments pushed as events happen, held until the socket asks for
 * more. The first `next` starts the stream, so a response refused before it (its slot not free)
 * starts nothing. `return` (the response closed, the client left, the server shuts down) stops it
 * at once, even while `next` waits for an event.
 */
export class EventStreamSource implements AsyncIterableIterator<string> {
  readonly #options: EventStreamOptions
  #queued: string[] = []
  #waiting: ((result: IteratorResult<string>) => void) | undefined
  #started = false
  #stop: (() => void) | undefined
  #ended = false

  constructor(options: EventStreamOptions) {
    this.#options = options
  }

  [Symbol.asyncIterator]() {
    return this
  }

  /** Queues a fragment; false, and nothing queued, when `limit` fragments wait already. */
  push(fragment: string): boolean {
    if (this.#ended) return true
    const waiting = this.#waiting
    if (waiting !== undefined) {
      this.#waiting = undefined
      waiting({ value: fragment, done: false })
      return true
    }
    if (this.#queued.length >= this.#options.limit) return false
    this.#queued.push(fragment)
    return true
  }

  async next(): Promise<IteratorResult<string>> {
    if (!this.#started) {
      this.#started = true
      const stop = await this.#options.start()
      if (this.#ended) stop()
      else this.#stop = stop
      return this.#ended ? DONE : { value: this.#options.opening, done: false }
    }
    if (this.#queued.length > 0) return { value: this.#take(), done: false }
    if (this.#ended) return DONE
    return new Promise((resolve) => (this.#waiting = resolve))
  }

  /**
   * The oldest fragments, joined up to what the body sends in one turn: the rest stay queued,
   * where they count against the limit, rather than waiting in the body beyond it.
   */
  #take(): string {
    let count = 1
    let length = this.#queued[0]!.length
    while (count < this.#queued.length && length + this.#queued[count]!.length <= CHUNK_BYTES) length += this.#queued[count++]!.length
    return this.#queued.splice(0, count).join('')
  }

  async return(): Promise<IteratorResult<string>> {
    if (!this.#ended) {
      this.#ended = true
      this.#queued = []
      this.#waiting?.(DONE)
      this.#waiting = undefined
      this.#stop?.()
    }
    return DONE
  }
}
