import type { BecameStuck, VerdictChange } from '../../../schemas/audit.js'
import { sseMessage, type StreamBacklog } from './event-stream.js'

/** Events named by one `event: verdicts` message: a few hundred KiB, a message a client parses at once. */
const EVENTS_PER_MESSAGE = 500

/** One event's changes not yet taken; `stuck` and `left` (every change's, in order) only once a second change comes. */
interface Pending {
  first: VerdictChange
  latest: VerdictChange
  stuck?: BecameStuck[]
  left?: string[]
}

const stuckKey = (stuck: BecameStuck) => `${stuck.site ?? ''}/${stuck.stage}`

/** A fallen-behind client's unwritten changes, one entry an event; `bytes` lets a client that stops reading be dropped at a bound. */
export class VerdictBacklog implements StreamBacklog<VerdictChange> {
  readonly #pending = new Map<number, Pending>()
  readonly #data: (change: VerdictChange) => string
  #bytes = 0

  /** `data`: the route's serializer, which caches a change's JSON for its other streams. */
  constructor(data: (change: VerdictChange) => string) {
    this.#data = data
  }

  get empty(): boolean {
    return this.#pending.size === 0
  }

  get bytes(): number {
    return this.#bytes
  }

  add(changes: readonly VerdictChange[]) {
    for (const change of changes) {
      const pending = this.#pending.get(change.event_no)
      this.#bytes += this.#data(change).length
      if (pending === undefined) {
        this.#pending.set(change.event_no, { first: change, latest: change })
        continue
      }
      this.#bytes -= this.#data(pending.latest).length
      pending.stuck ??= [...pending.first.became_stuck]
      pending.stuck.push(...change.became_stuck)
      pending.left ??= [...(pending.first.left_sites ?? [])]
      pending.left.push(...(change.left_sites ?? []))
      pending.latest = change
    }
  }

  take(): string {
    const changes = this.changes(EVENTS_PER_MESSAGE)
    return sseMessage('verdicts', `{"changes":[${changes.map((change) => this.#data(change)).join(',')}]}`)
  }

  /** Takes the changes of at most `limit` events, oldest first, each merged from the verdict the client last heard to the latest. */
  changes(limit: number): VerdictChange[] {
    const taken: VerdictChange[] = []
    for (const [eventNo, pending] of this.#pending) {
      if (taken.length >= limit) break
      this.#pending.delete(eventNo)
      this.#bytes -= this.#data(pending.latest).length
      taken.push(merged(pending))
    }
    if (this.#pending.size === 0) this.#bytes = 0
    return taken
  }
}

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
