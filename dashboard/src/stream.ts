import { createParser } from 'eventsource-parser'
import type { StreamedTransition, VerdictChange } from './api-types.js'
import { apiError, describe, outageOf, SessionEnded, type Outage } from './errors.js'

export const STREAM_PATH = '/v1/event-tracer/stream'

export type StreamState =
  | { kind: 'connecting' }
  | { kind: 'live' }
  /**
   * Disconnected; the next attempt starts at `retryAt` (ms since the epoch). `outage` is why, in the
   * kinds the page names (`closed`: the service ended the stream), `reason` the sentence of it.
   */
  | { kind: 'waiting'; retryAt: number; reason: string; outage: Outage | 'closed' }
  | { kind: 'stopped' }

const isTransition = (value: unknown): value is StreamedTransition => {
  const t = value as Partial<StreamedTransition> | null
  return (
    typeof t === 'object' &&
    t !== null &&
    typeof t.event_no === 'number' &&
    typeof t.key === 'string' &&
    (t.to === 'complete' || t.to === 'incomplete') &&
    typeof t.at === 'number'
  )
}

const VERDICTS = new Set(['complete', 'in_progress', 'stuck', 'contradiction'])
const isVerdict = (value: unknown) => value === null || VERDICTS.has(value as string)

const isVerdictChange = (value: unknown): value is VerdictChange => {
  const c = value as Partial<VerdictChange> | null
  return (
    typeof c === 'object' &&
    c !== null &&
    typeof c.event_no === 'number' &&
    isVerdict(c.from) &&
    isVerdict(c.to) &&
    Array.isArray(c.became_stuck) &&
    (c.audit === null || (typeof c.audit === 'object' && c.audit !== undefined && typeof c.audit.verdict === 'string' && Array.isArray(c.audit.sites)))
  )
}

const changesOf = (data: unknown): VerdictChange[] => {
  const changes = (data as { changes?: unknown } | null)?.changes
  return Array.isArray(changes) ? changes.filter(isVerdictChange) : []
}

export interface StreamParserHandlers {
  onTransition: (transition: StreamedTransition) => void
  /** The verdict changes that came together, in order: those of `verdict` messages, and each of every `verdicts` message. */
  onVerdicts?: (changes: VerdictChange[]) => void
}

/**
 * Reads the bytes of the stream as they come, in chunks cut anywhere: every `event: transition`
 * message whose data is a transition goes to `onTransition`; the verdict changes of `event: verdict`
 * messages and of `event: verdicts` messages (what a client that fell behind gets, several events
 * each) go to `onVerdicts`, all that follow one another in a chunk at once, so that a burst is
 * applied in one go rather than change by change. Keep-alive comments, other events and data of
 * another shape are skipped.
 */
export function streamParser(handlers: StreamParserHandlers) {
  let verdicts: VerdictChange[] = []
  const flush = () => {
    if (verdicts.length === 0) return
    const batch = verdicts
    verdicts = []
    handlers.onVerdicts?.(batch)
  }
  const parser = createParser({
    onEvent(message) {
      if (message.event !== 'transition' && message.event !== 'verdict' && message.event !== 'verdicts') return
      let data: unknown
      try {
        data = JSON.parse(message.data)
      } catch {
        return
      }
      if (message.event === 'transition' && isTransition(data)) {
        // The changes before it, first: each event's messages are applied in the order written.
        flush()
        handlers.onTransition(data)
      }
      if (message.event === 'verdict' && isVerdictChange(data)) verdicts.push(data)
      if (message.event === 'verdicts') verdicts.push(...changesOf(data))
    }
  })
  return {
    feed(chunk: string) {
      parser.feed(chunk)
      flush()
    },
    reset() {
      verdicts = []
      parser.reset()
    }
  }
}

/** The transitions of the stream alone (see streamParser). */
export const transitionParser = (onTransition: (transition: StreamedTransition) => void) => streamParser({ onTransition })

const FIRST_RETRY_MS = 1000
/**
 * Short, so that a service that comes back is followed again within 5 s (the longest wait, then
 * connecting): an operator watching a stopped service should not wait half a minute to trust the page.
 */
const LONGEST_RETRY_MS = 3000

/** Exponential backoff with jitter (half to all of the step), so that many pages do not return at once. */
export function retryDelay(attempt: number, random: () => number): number {
  const step = Math.min(LONGEST_RETRY_MS, FIRST_RETRY_MS * 2 ** attempt)
  return Math.round(step * (0.5 + random() / 2))
}

export interface StreamDeps {
  fetch: (path: string, init: RequestInit) => Promise<Response>
  now: () => number
  random: () => number
  /** Resolves after `ms`, or early when `signal` aborts. */
  sleep: (ms: number, signal: AbortSignal) => Promise<void>
}

export interface StreamHandlers {
  onTransition: (transition: StreamedTransition) => void
  /**
   * With it, the stream is opened with `verdicts=true` and the verdict changes (a stage turned stuck
   * with no write among them) come here, those of one read of the stream together.
   */
  onVerdicts?: (changes: VerdictChange[]) => void
  onState: (state: StreamState) => void
  /** Connected (again): transitions written while not connected were missed, so read afresh. */
  onConnected: () => void
  /** The session is over; the stream has stopped. */
  onSessionEnded: (error: SessionEnded) => void
}

/**
 * Follows the live stream with fetch (the token goes in the Authorization header, which
 * EventSource cannot send), reconnecting with backoff until stopped.
 */
export class TraceStream {
  private readonly abort = new AbortController()

  constructor(
    private readonly deps: StreamDeps,
    private readonly handlers: StreamHandlers
  ) {}

  start(): this {
    void this.run()
    return this
  }

  stop(): void {
    if (this.abort.signal.aborted) return
    this.abort.abort()
    this.handlers.onState({ kind: 'stopped' })
  }

  private async run(): Promise<void> {
    const { signal } = this.abort
    const { onVerdicts } = this.handlers
    const parser = streamParser({
      onTransition: (transition) => this.handlers.onTransition(transition),
      ...(onVerdicts === undefined ? {} : { onVerdicts: (changes: VerdictChange[]) => onVerdicts(changes) })
    })
    const path = onVerdicts === undefined ? STREAM_PATH : `${STREAM_PATH}?verdicts=true`
    for (let attempt = 0; !signal.aborted; ) {
      this.handlers.onState({ kind: 'connecting' })
      let reason: string
      let outage: Outage | 'closed'
      try {
        const response = await this.deps.fetch(path, { signal, headers: { accept: 'text/event-stream' } })
        if (!response.ok || response.body === null) throw await apiError(response)
        attempt = 0
        parser.reset()
        this.handlers.onState({ kind: 'live' })
        this.handlers.onConnected()
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
        for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) parser.feed(chunk.value)
        reason = 'The stream was closed by the service.'
        outage = 'closed'
      } catch (error) {
        if (signal.aborted) return
        if (error instanceof SessionEnded) {
          this.stop()
          this.handlers.onSessionEnded(error)
          return
        }
        reason = describe(error)
        outage = outageOf(error)
      }
      if (signal.aborted) return
      const delay = retryDelay(attempt++, this.deps.random)
      this.handlers.onState({ kind: 'waiting', retryAt: this.deps.now() + delay, reason, outage })
      await this.deps.sleep(delay, signal)
    }
  }
}

/** setTimeout as a promise that an abort ends early. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms)
    signal.addEventListener('abort', done, { once: true })
    function done() {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
  })
}
