import { setImmediate as nextTurn } from 'node:timers/promises'
import type { TimeWindow } from '../domain/time-window.js'
import { keysetPages, type PageTurn } from '../store/pages.js'
import { entryPosition, type WindowEntry } from '../domain/audit/kept-report.js'
import type { Store } from '../store/port.js'

// Each kept report is a few hundred bytes, one row of one index range.
const PAGE_SIZE = 500

/** The kept reports of a window's events, page by page (each in a `turn` when given), yielding to the event loop between pages as windowParts does. */
export async function* keptWindow(store: Store, window: TimeWindow, turn?: PageTurn): AsyncGenerator<WindowEntry[]> {
  for await (const page of keysetPages((after, limit) => store.audits.windowPage(window, after, limit), entryPosition, PAGE_SIZE, turn)) {
    yield page
    await nextTurn()
  }
}
