import { setImmediate as nextTurn } from 'node:timers/promises'
import type { TimeWindow } from '../domain/time-window.js'
import { keysetPages, type PageTurn } from '../store/pages.js'
import type { KeptAudit, Store } from '../store/port.js'

/**
 * Kept audits read at a time: each is a few hundred bytes of facts, one row of one index range, so
 * a page costs little more than its JSON.
 */
const PAGE_SIZE = 500

const positionOf = (kept: KeptAudit) => ({ timestamp: kept.facts.event!.timestamp, event_no: kept.facts.event_no })

/**
 * The kept audits of a window's baseband events, page by page (each in a `turn` of the service's
 * queue of expensive reads, when given), with a turn of the event loop between pages as
 * windowParts has, so that a year's window never holds the others up.
 */
export async function* keptWindow(store: Store, window: TimeWindow, turn?: PageTurn): AsyncGenerator<KeptAudit[]> {
  for await (const page of keysetPages((after, limit) => store.audits.windowPage(window, after, limit), positionOf, PAGE_SIZE, turn)) {
    yield page
    await nextTurn()
  }
}
