import { setImmediate as nextTurn } from 'node:timers/promises'
import type { TimeWindow } from '../domain/time-window.js'
import { keysetPages, type PageTurn } from '../store/pages.js'
import { isFixed, type WindowEntry } from '../domain/audit/kept-report.js'
import type { Store } from '../store/port.js'

/**
 * Kept reports read at a time: each is a few hundred bytes, one row of one index range, so
 * a page costs little more than its JSON.
 */
const PAGE_SIZE = 500

const positionOf = (entry: WindowEntry) => ({ timestamp: isFixed(entry) ? entry.timestamp : entry.event.timestamp, event_no: entry.event_no })

/**
 * The kept reports of a window's baseband events, page by page (each in a `turn` of the service's
 * queue of expensive reads, when given), with a turn of the event loop between pages as
 * windowParts has, so that a year's window never holds the others up.
 */
export async function* keptWindow(store: Store, window: TimeWindow, turn?: PageTurn): AsyncGenerator<WindowEntry[]> {
  for await (const page of keysetPages((after, limit) => store.audits.windowPage(window, after, limit), positionOf, PAGE_SIZE, turn)) {
    yield page
    await nextTurn()
  }
}
