import type autocannon from 'autocannon'
import { readFileSync, writeFileSync } from 'node:fs'
import { CLASSIFICATION_STAGE, STAGES, traceKey } from '../src/vocabulary.js'
import { loadConfig } from '../src/config.js'
import { openSqliteStore } from '../src/store/sqlite/store.js'

/** Far above any seeded event_no, so every write creates and fills a trace no other scenario reads. */
const FIRST_EVENT_NO = 100_000_001
/** Events a run may touch: 17 keys each, so far more requests than any machine answers in a round. */
const EVENTS_PER_RUN = 40_000
/** Requests are dealt in blocks of this many events, every (event, key) pair once, in shuffled order. */
const BLOCK_EVENTS = 64

export interface WriteCheck {
  acknowledged: number
  /** Acknowledged updates (200) whose key does not read `complete` in the stored trace. */
  lost: number
}

interface Pair {
  stage: string
  site: string
  key: string
}

interface Write {
  eventNo: number
  key: string
}

/**
 * update-trace on fresh events: each request sets a distinct (event, key) pair to `complete`, and
 * the 17 keys of one event go out shuffled among 64 events, so concurrent requests often create and
 * update the same trace at once (the race a lost update would come from). Afterwards every
 * acknowledged pair is read back from the SQLite file: a key that is not `complete` was lost.
 */
export class UpdateTraceWrites {
  private readonly pairs: Pair[]
  private readonly statePath: string

  constructor(
    private readonly storePath: string,
    sites: readonly string[]
  ) {
    this.pairs = [
      { stage: CLASSIFICATION_STAGE, site: sites[0]! },
      ...STAGES.flatMap((stage) => sites.map((site) => ({ stage, site })))
    ].map((pair) => ({ ...pair, key: traceKey(pair.stage as (typeof STAGES)[number], pair.site) }))
    // Beside the store, so a store made anew elsewhere starts its own count.
    this.statePath = `${storePath}.update-trace-next.json`
  }

  /** The requests of one run, and the check to call once it has finished. */
  prepare(token: string): { requests: autocannon.Request[]; check: () => Promise<WriteCheck> } {
    const base = this.reserve()
    const order = shuffled(BLOCK_EVENTS * this.pairs.length)
    const acknowledged: Write[] = []
    let sent = 0
    const headers = { authorization: token, 'content-type': 'application/json' }
    const request: autocannon.Request = {
      method: 'POST',
      path: '/v1/event-tracer/update-trace',
      setupRequest: (req, context) => {
        const index = sent++
        const slot = order[index % order.length]!
        const eventNo = base + Math.floor(index / order.length) * BLOCK_EVENTS + Math.floor(slot / this.pairs.length)
        const pair = this.pairs[slot % this.pairs.length]!
        // One request at a time per connection: the context carries this write to its response.
        ;(context as { write?: Write }).write = { eventNo, key: pair.key }
        const body = JSON.stringify({ event: eventNo, site: pair.site, stage: pair.stage, status: 'complete' })
        // A copy: autocannon writes Content-Length into the headers object it is given.
        return { ...req, headers: { ...headers }, body }
      },
      onResponse: (status, _body, context) => {
        const write = (context as { write?: Write }).write
        if (status === 200 && write !== undefined) acknowledged.push(write)
      }
    }
    return { requests: [request], check: () => this.check(acknowledged, sent) }
  }

  private async check(acknowledged: Write[], sent: number): Promise<WriteCheck> {
    if (sent > EVENTS_PER_RUN * this.pairs.length) throw new Error('update-trace ran out of reserved event numbers')
    const store = openSqliteStore(this.storePath, loadConfig({}).TRACER_SITES)
    try {
      let lost = 0
      const traces = new Map<number, Record<string, unknown> | null>()
      for (const { eventNo, key } of acknowledged) {
        if (!traces.has(eventNo)) traces.set(eventNo, await store.traces.find(eventNo))
        if (traces.get(eventNo)?.[key] !== 'complete') lost += 1
      }
      return { acknowledged: acknowledged.length, lost }
    } finally {
      await store.close()
    }
  }

  /**
   * Reserves event numbers no earlier run used, written down before the run starts: a run that
   * crashes halfway cannot make the next one read its leftovers as acknowledged writes.
   */
  private reserve(): number {
    let next = FIRST_EVENT_NO
    try {
      next = (JSON.parse(readFileSync(this.statePath, 'utf8')) as { next: number }).next
    } catch {
      // First run on this store.
    }
    writeFileSync(this.statePath, JSON.stringify({ next: next + EVENTS_PER_RUN }) + '\n')
    return next
  }
}

/** 0 … n-1 in random order (Fisher-Yates). */
function shuffled(n: number): number[] {
  const values = Array.from({ length: n }, (_, i) => i)
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1))
    ;[values[i], values[j]] = [values[j]!, values[i]!]
  }
  return values
}
