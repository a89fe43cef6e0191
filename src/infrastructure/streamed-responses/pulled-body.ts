import { Readable } from 'node:stream'
import { setImmediate as nextTurn } from 'node:timers/promises'

/** The largest chunk handed to the socket and the most queued ahead of it: a client that stops reading pins a few chunks, not pages. */
const CHUNK_CHARS = 16 * 1024

interface PulledBodyOptions {
  stallMs: number
  /** Called once the client has taken nothing for stallMs; it should end the response. */
  onStall: () => void
  /** Each fragment is sent whole as soon as it is given (an event stream's shared buffers), not gathered into chunks. */
  prompt?: boolean
}

/** Text, or bytes shared between bodies and never changed. */
export type BodyFragment = string | Buffer

// A body pulled by the socket (`_read`), a chunk a turn of the event loop. Text goes out as text (object mode): the socket frees its
// encoding once the kernel has it, where a Buffer made here would wait for the collector and raise memory by what a burst sent.
export class PulledBody extends Readable {
  readonly #source: AsyncIterator<BodyFragment>
  #pending: BodyFragment
  #exhausted: boolean
  #pulling = false
  /** What is pending is what was left of a fragment cut to a chunk. */
  #cut = false
  #eof = false
  #stallTimer: NodeJS.Timeout
  readonly #onStall: () => void
  readonly #prompt: boolean
  #progressedAt = performance.now()

  constructor(source: AsyncIterator<BodyFragment>, first: IteratorResult<BodyFragment>, { stallMs, onStall, prompt }: PulledBodyOptions) {
    // Not destroyed at its end: the stall clock runs for chunks still in the socket until the response closes and destroys it.
    super({ objectMode: true, highWaterMark: 1, autoDestroy: false })
    this.#source = source
    this.#exhausted = first.done === true
    this.#pending = first.done === true ? '' : first.value
    this.#onStall = onStall
    this.#prompt = prompt === true
    this.#stallTimer = setTimeout(() => this.#checkStall(), stallMs).unref()
  }

  progressed() {
    if (this.destroyed) return
    this.#stallTimer.refresh()
    this.#progressedAt = performance.now()
  }

  /** Milliseconds since the client last took bytes while the body waited for it: 0 while it keeps up. */
  stalledForMs(now = performance.now()): number {
    return this.#pulling ? 0 : now - this.#progressedAt
  }

  stallAfter(stallMs: number) {
    clearTimeout(this.#stallTimer)
    this.#stallTimer = setTimeout(() => this.#checkStall(), stallMs).unref()
  }

  /** Ends the body after what is queued, without waiting for the source (an event stream waiting for its next event). */
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
        // Each push is a write to the socket: the text left of a fragment cut at CHUNK_CHARS goes with the next, not alone
        // (bytes go as they are: cut anywhere, they would not decode). The first fragment goes as it is, with the status.
        const short = this.#pending.length === 0 || (this.#cut && typeof this.#pending === 'string' && this.#pending.length < CHUNK_CHARS)
        if (!this.#exhausted && short) {
          this.#pending = await this.#moreText(this.#pending)
          if (this.destroyed || this.#eof) return
          // Time spent waiting for the source (a quiet event stream) is not the client's.
          this.progressed()
        }
        if (this.#pending.length === 0) return this.#end()
        const chunk = this.#prompt ? this.#pending : head(this.#pending)
        this.#pending = this.#pending.slice(chunk.length)
        this.#cut = this.#pending.length > 0
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

  /** Text (or no bytes) and the next fragments joined up to about CHUNK_CHARS; when prompt, the one next fragment. Empty once the source is done. */
  async #moreText(text: BodyFragment): Promise<BodyFragment> {
    if (this.#prompt) {
      const next = await this.#source.next()
      if (next.done !== true) return next.value
      this.#exhausted = true
      return ''
    }
    let joined = text.toString()
    while (joined.length < CHUNK_CHARS && !this.#exhausted) {
      const next = await this.#source.next()
      if (next.done === true) this.#exhausted = true
      else joined += next.value.toString()
    }
    return joined
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
      // A source that cannot be closed early has nothing to release.
    }
  }
}

const head = (fragment: BodyFragment): BodyFragment => (typeof fragment === 'string' ? fragment.slice(0, CHUNK_CHARS) : fragment.subarray(0, CHUNK_CHARS))
