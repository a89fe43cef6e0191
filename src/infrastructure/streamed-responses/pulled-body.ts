import { Readable } from 'node:stream'
import { setImmediate as nextTurn } from 'node:timers/promises'

/**
 * The largest chunk handed to the socket, in characters of text (a Buffer's in bytes), and the most
 * this stream queues ahead of it: with the socket's own buffer, a client that stops reading pins a
 * few chunks of text, not pages. Sources that make text make it in fragments of about this size.
 */
export const CHUNK_CHARS = 16 * 1024

export interface PulledBodyOptions {
  /** How long the client may take nothing while the body waits for it. */
  stallMs: number
  /** Called once the client has taken nothing for stallMs; it should end the response. */
  onStall: () => void
  /**
   * Each fragment is sent as soon as the source gives it, and whole (an event stream, whose next
   * fragment may be minutes away, and whose fragments are buffers shared by many streams), instead
   * of being gathered with the next ones and cut into chunks.
   */
  prompt?: boolean
}

/** What a source gives: text, or bytes (shared between bodies, never changed). */
export type BodyFragment = string | Buffer

/**
 * A response body that asks its source for more text only when the socket has taken what was sent
 * before: `_read` is the socket's demand, so nothing is produced for a client that does not read.
 * Fragments are joined into chunks of at most CHUNK_CHARS, one chunk per turn of the event loop, so
 * other responses and /health get their turn in between.
 *
 * Text goes to the socket as text (an object-mode stream, one chunk queued): the socket encodes it
 * into memory it frees as soon as the kernel has taken the bytes, which is at once for a client that
 * reads. Made into a Buffer here, each chunk would stay allocated until the garbage collector found
 * it, and a burst of responses would raise the process's memory by what it sent in the meantime.
 */
export class PulledBody extends Readable {
  readonly #source: AsyncIterator<BodyFragment>
  #pending: BodyFragment
  #exhausted: boolean
  #pulling = false
  /** The end of the body is queued: nothing may be pushed after it. */
  #eof = false
  #stallTimer: NodeJS.Timeout
  readonly #onStall: () => void
  readonly #prompt: boolean
  /** When the client last took bytes (or the body last waited for its source rather than the client). */
  #progressedAt = performance.now()

  /** `first` is the source's first result, read before the status was sent. */
  constructor(source: AsyncIterator<BodyFragment>, first: IteratorResult<BodyFragment>, { stallMs, onStall, prompt }: PulledBodyOptions) {
    // Not destroyed at its end: the last chunks may still wait in the socket, and the stall clock
    // must keep running for them until the response closes (whoever sends it destroys the body then).
    super({ objectMode: true, highWaterMark: 1, autoDestroy: false })
    this.#source = source
    this.#exhausted = first.done === true
    this.#pending = first.done === true ? '' : first.value
    this.#onStall = onStall
    this.#prompt = prompt === true
    this.#stallTimer = setTimeout(() => this.#checkStall(), stallMs).unref()
  }

  /** The client took bytes (the socket drained): its stall clock starts again. */
  progressed() {
    if (this.destroyed) return
    this.#stallTimer.refresh()
    this.#progressedAt = performance.now()
  }

  /** Milliseconds since the client last took bytes while the body waited for it: 0 while it keeps up. */
  stalledForMs(now = performance.now()): number {
    return this.#pulling ? 0 : now - this.#progressedAt
  }

  /** From now on, a client that takes nothing for `stallMs` is dropped (shorter while the server closes). */
  stallAfter(stallMs: number) {
    clearTimeout(this.#stallTimer)
    this.#stallTimer = setTimeout(() => this.#checkStall(), stallMs).unref()
  }

  /**
   * Ends the body after what is already queued, without waiting for the source: an event stream
   * that is waiting for its next event ends now.
   */
  endEarly() {
    this.#exhausted = true
    this.#pending = ''
    this.#closeSource()
    this.#end()
  }

  override _read() {
    this.progressed()
    if (!this.#pulling) void this.#produce()
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void) {
    clearTimeout(this.#stallTimer)
    this.#exhausted = true
    this.#closeSource()
    callback(error)
  }

  async #produce() {
    this.#pulling = true
    try {
      for (;;) {
        if (this.#pending.length === 0) {
          if (this.#exhausted) return this.#end()
          this.#pending = await this.#nextText()
          if (this.destroyed || this.#eof) return
          // Time spent waiting for the source (a quiet event stream) is not the client's.
          this.progressed()
          continue
        }
        const chunk = this.#prompt ? this.#pending : head(this.#pending)
        this.#pending = this.#pending.slice(chunk.length)
        if (!this.push(chunk)) return
        await nextTurn()
        if (this.destroyed || this.#eof) return
      }
    } catch (error) {
      this.destroy(error as Error)
    } finally {
      this.#pulling = false
    }
  }

  /** Fragments joined up to about CHUNK_CHARS (one fragment as it is, when prompt); empty once the source is done. */
  async #nextText(): Promise<BodyFragment> {
    if (this.#prompt) {
      const next = await this.#source.next()
      if (next.done !== true) return next.value
      this.#exhausted = true
      return ''
    }
    let text = ''
    while (text.length < CHUNK_CHARS && !this.#exhausted) {
      const next = await this.#source.next()
      if (next.done === true) this.#exhausted = true
      else text += typeof next.value === 'string' ? next.value : next.value.toString()
    }
    return text
  }

  #end() {
    if (this.#eof || this.destroyed) return
    this.#eof = true
    this.push(null)
  }

  #checkStall() {
    if (this.destroyed) return
    // Waiting for the source, not for the client: a quiet stream is not a stalled one.
    if (this.#pulling) return this.progressed()
    this.#onStall()
  }

  /** Lets a generator run its `finally` (a cursor closes); it runs once any pending read settles. */
  #closeSource() {
    try {
      void this.#source.return?.()?.catch(() => {})
    } catch {
      // a source that cannot be closed early has nothing to release
    }
  }
}

/** The first CHUNK_CHARS of a fragment: characters of a string, bytes of a Buffer. */
const head = (fragment: BodyFragment): BodyFragment =>
  typeof fragment === 'string' ? fragment.slice(0, CHUNK_CHARS) : fragment.subarray(0, CHUNK_CHARS)
