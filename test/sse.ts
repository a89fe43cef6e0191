import type { Readable } from 'node:stream'
import type { StreamedTransition } from '../schemas/history.js'
import type { VerdictChange } from '../schemas/audit.js'

/** One message of a server-sent event stream, and when it arrived (Date.now()). */
export interface SseMessage {
  event: string
  data: string
  arrivedAt: number
}

/**
 * A client of a server-sent event stream, parsing as the bytes arrive (a body from inject with
 * payloadAsStream, or an http.IncomingMessage). Waits are on arrivals, each with a deadline.
 */
export class SseClient {
  readonly messages: SseMessage[] = []
  readonly comments: string[] = []
  /** Every byte received, in order. */
  text = ''
  /** 'end' when the body ended as a complete response; the error when it was cut. */
  readonly ended: Promise<'end' | Error>
  #finished = false
  #pending = ''
  readonly #checks = new Set<() => void>()

  constructor(readonly body: Readable) {
    body.setEncoding('utf8')
    this.ended = new Promise((resolve) => {
      body.on('data', (chunk: string) => this.#take(chunk))
      body.once('end', () => resolve('end'))
      body.once('error', (error) => resolve(error))
      // Whichever comes first settles it: a connection closed before the body's end is not one.
      body.once('close', () => resolve(new Error('the connection closed before the body ended')))
    })
    void this.ended.then(() => {
      this.#finished = true
      this.#check()
    })
  }

  /** The data of every `transition` message so far, parsed. */
  get transitions(): StreamedTransition[] {
    return this.messages.filter((message) => message.event === 'transition').map((message) => JSON.parse(message.data) as StreamedTransition)
  }

  /** The data of every `verdict` message so far (streams opened with `verdicts=true`), parsed. */
  get verdicts(): VerdictChange[] {
    return this.messages.filter((message) => message.event === 'verdict').map((message) => JSON.parse(message.data) as VerdictChange)
  }

  /** Resolves once `condition` holds, checked at every arrival; rejects naming `what` after `timeoutMs` or when the stream ends first. */
  until(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => settle(new Error(`timed out after ${timeoutMs} ms waiting until ${what}`)), timeoutMs)
      const settle = (error?: Error) => {
        clearTimeout(timer)
        this.#checks.delete(check)
        if (error === undefined) resolve()
        else reject(error)
      }
      const check = () => {
        if (condition()) settle()
        else if (this.#finished) settle(new Error(`the stream ended before ${what}`))
      }
      this.#checks.add(check)
      check()
    })
  }

  #take(chunk: string) {
    this.text += chunk
    this.#pending += chunk
    let end: number
    while ((end = this.#pending.indexOf('\n\n')) >= 0) {
      this.#parse(this.#pending.slice(0, end))
      this.#pending = this.#pending.slice(end + 2)
    }
    this.#check()
  }

  #parse(block: string) {
    let event = 'message'
    const data: string[] = []
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) {
        this.comments.push(line.slice(1).trim())
        continue
      }
      const colon = line.indexOf(':')
      const field = colon < 0 ? line : line.slice(0, colon)
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '')
      if (field === 'event') event = value
      else if (field === 'data') data.push(value)
    }
    if (data.length > 0) this.messages.push({ event, data: data.join('\n'), arrivedAt: Date.now() })
  }

  #check() {
    for (const check of [...this.#checks]) check()
  }
}
