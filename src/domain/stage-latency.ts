import type { StageLatencyRow } from '../../schemas/stage-latency.js'
import { CLASSIFICATION_KEY, CLASSIFICATION_STAGE, STAGES, stageKey, type PipelineStage, type Sites } from '../vocabulary.js'
import type { TraceRecord } from './records.js'
import { storedStatus } from './trace.js'

export interface LatencyEvent {
  /** Event time, ms since the epoch. */
  timestamp: number
  /** The sites the event asked for baseband data from (see requestedSites). */
  sites: readonly string[]
  trace: TraceRecord | null
  /** Its transitions; of each key only the first to `complete` counts, which is all the store's bounded read gives. */
  transitions: readonly { key: string; to: unknown; at: number }[]
}

interface Tally {
  complete: number
  incomplete: number
  /** Seconds from the event to the key's first transition to `complete`, of keys complete now. */
  latencies: number[]
  /** Keys complete now whose first transition to `complete` came before the event: no latency, an audit finding. */
  beforeEvent: number
}

/** Stage latency over a window, an event at a time; a key completed before its event counts apart, never as a negative latency. */
export class StageLatency {
  private readonly tallies = new Map<string, Tally>()
  private readonly requested = new Set<string>()

  constructor(private readonly sites: Sites) {}

  add(event: LatencyEvent): void {
    // The earliest `at` wins whatever the order given.
    const completedAt = new Map<string, number>()
    for (const { key, to, at } of event.transitions) {
      const seen = completedAt.get(key)
      if (to === 'complete' && (seen === undefined || at < seen)) completedAt.set(key, at)
    }
    this.count(CLASSIFICATION_KEY, event, completedAt)
    for (const site of event.sites) {
      if (!this.sites.includes(site)) continue
      this.requested.add(site)
      for (const stage of STAGES) this.count(stageKey(stage, site), event, completedAt)
    }
  }

  rows(): StageLatencyRow[] {
    const rows = [this.row(CLASSIFICATION_STAGE, null, CLASSIFICATION_KEY)]
    for (const stage of STAGES) {
      for (const site of this.sites.names) {
        if (this.requested.has(site)) rows.push(this.row(stage, site, stageKey(stage, site)))
      }
    }
    return rows
  }

  private count(key: string, event: LatencyEvent, completedAt: ReadonlyMap<string, number>) {
    let tally = this.tallies.get(key)
    if (tally === undefined) this.tallies.set(key, (tally = { complete: 0, incomplete: 0, latencies: [], beforeEvent: 0 }))
    if (storedStatus(event.trace, key) === 'incomplete') {
      tally.incomplete += 1
      return
    }
    tally.complete += 1
    const at = completedAt.get(key)
    if (at === undefined) return
    const latency = at - event.timestamp / 1000
    if (latency < 0) tally.beforeEvent += 1
    else tally.latencies.push(latency)
  }

  private row(stage: PipelineStage, site: string | null, key: string): StageLatencyRow {
    const { complete, incomplete, latencies, beforeEvent } = this.tallies.get(key) ?? { complete: 0, incomplete: 0, latencies: [], beforeEvent: 0 }
    const sorted = Float64Array.from(latencies).sort()
    return {
      stage,
      site,
      complete,
      incomplete,
      completed_before_event: beforeEvent,
      p50_s: nearestRank(sorted, 50),
      p95_s: nearestRank(sorted, 95),
      max_s: nearestRank(sorted, 100)
    }
  }
}

/** The nearest-rank percentile, so every answer is an observed latency; to the millisecond, the event times' resolution. */
export function nearestRank(sorted: Float64Array, p: number): number | null {
  if (sorted.length === 0) return null
  const rank = Math.max(1, Math.ceil((p * sorted.length) / 100))
  return Math.round(sorted[rank - 1]! * 1000) / 1000
}
