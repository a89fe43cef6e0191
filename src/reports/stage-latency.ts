import type { StageLatencyReport } from '../../schemas/stage-latency.js'
import { requestedSites } from '../domain/audit/requested-sites.js'
import { StageLatency } from '../domain/stage-latency.js'
import type { TimeWindow } from '../domain/time-window.js'
import type { PageTurn } from '../store/pages.js'
import type { Store } from '../store/port.js'
import type { Sites } from '../vocabulary.js'
import { reportWindow } from './audit-report.js'
import { windowParts } from './window-parts.js'

/** Stage latency over a window's baseband events, read a page at a time in one pass. */
export async function stageLatencyReport(store: Store, window: TimeWindow, sites: Sites, turn?: PageTurn): Promise<StageLatencyReport> {
  const latency = new StageLatency(sites)
  for await (const page of windowParts(store, window, turn)) {
    for (const { event, trace, transitions } of page) {
      latency.add({ timestamp: event.timestamp, sites: requestedSites(event.actions, sites), trace, transitions })
    }
  }
  return { window: reportWindow(window), stages: latency.rows() }
}
