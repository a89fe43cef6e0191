import type { BecameStuck, VerdictChange } from '../../../schemas/audit.js'
import { sseMessage, type StreamBacklog } from './event-stream.js'

/** Events named by one `event: verdicts` message: a few hundred KiB, a message a client parses at once. */
export const EVENTS_PER_MESSAGE = 500

/** What a stream holds of one event's changes its client has not taken: the first and the latest, and every stage that turned stuck. */
interface Pending {
  first: VerdictChange
  latest: VerdictChange
  /** Filled only once a second change of the event comes: the stages of every change, in order. */
  stuck?: BecameStuck[]
  /** Likewise, the sites every change left. */
  left?: string[]
}

const stuckKey = (stuck: BecameStuck) => `${stuck.site ?? ''}/${stuck.stage}`

/**
 * The verdict changes a live stream has not written to a client that fell behind, one entry per
 * event whatever the number of its changes: what it holds is bounded by the number of events, and
 * a burst of any size costs a client that reads one message per few hundred events. Changes are
 * shared between streams (one object per change, made when the feed was read); `bytes` counts what
 * the pending messages would take, so that a client that stops reading is dropped at a bound.
 */
export class VerdictBacklog implements StreamBacklog<VerdictChange> {
  readonly #pending = new Map<number, Pending>()
  readonly #data: (change: VerdictChange) => string
  #bytes = 0

  /** `data`: a change as the JSON of its message (the route's serializer, which caches it for the change's other streams). */
  constructor(data: (change: VerdictChange) => string) {
    this.#data = data
  }

  #sizeOf(change: VerdictChange) {
    return this.#data(change).length
  }

  get empty(): boolean {
    return this.#pending.size === 0
  }

  /** Events with a change not yet written. */
  get events(): number {
    return this.#pending.size
  }

  /** About what writing every pending change would take, in bytes. */
  get bytes(): number {
    return this.#bytes
  }

  add(changes: readonly VerdictChange[]) {
    for (const change of changes) {
      const pending = this.#pending.get(change.event_no)
      this.#bytes += this.#sizeOf(change)
      if (pending === undefined) {
        this.#pending.set(change.event_no, { first: change, latest: change })
        continue
      }
      this.#bytes -= this.#sizeOf(pending.latest)
      pending.stuck ??= [...pending.first.became_stuck]
      pending.stuck.push(...change.became_stuck)
      pending.left ??= [...(pending.first.left_sites ?? [])]
      pending.left.push(...(change.left_sites ?? []))
      pending.latest = change
    }
  }

  /** An `event: verdicts` message naming the next EVENTS_PER_MESSAGE events (see changes). */
  take(): string {
    const changes = this.changes(EVENTS_PER_MESSAGE)
    return sseMessage('verdicts', `{"changes":[${changes.map((change) => this.#data(change)).join(',')}]}`)
  }

  /**
   * The changes of at most `limit` events, the oldest pending first, each merged into one: from
   * the verdict the client last heard to the latest, with every stage that turned stuck meanwhile.
   * They leave the backlog.
   */
  changes(limit: number): VerdictChange[] {
    const taken: VerdictChange[] = []
    for (const [eventNo, pending] of this.#pending) {
      if (taken.length >= limit) break
      this.#pending.delete(eventNo)
      this.#bytes -= this.#sizeOf(pending.latest)
      taken.push(merged(pending))
    }
    if (this.#pending.size === 0) this.#bytes = 0
    return taken
  }
}

/** One change standing for all of an event's pending ones (the very change when there was one). */
function merged({ first, latest, stuck, left: leftSites }: Pending): VerdictChange {
  if (stuck === undefined) return first
  const seen = new Set<string>()
  const became_stuck = stuck.filter((stage) => !seen.has(stuckKey(stage)) && seen.add(stuckKey(stage)) !== undefined)
  const left = new Set(leftSites)
  // A site left and asked for again meanwhile is not left.
  for (const site of latest.audit?.sites ?? []) left.delete(site)
  const change: VerdictChange = { ...latest, from: first.from, became_stuck }
  if (left.size > 0) change.left_sites = [...left]
  else delete change.left_sites
  return change
}
