import { setImmediate as nextTurn } from 'node:timers/promises'
import type { WindowEventParts } from '../domain/records.js'
import type { TimeWindow } from '../domain/time-window.js'
import { keysetPages, type PageTurn } from '../store/pages.js'
import type { Store } from '../store/port.js'

/**
 * Events read from the store at a time: bounds the memory of one report. Each page is a range scan
 * of the events, then the bounded read of what their facts are made from (a few index searches an
 * event, however long its history: see WindowEventParts).
 */
const PAGE_SIZE = 200

/**
 * The baseband events of a window with everything the audit and stage latency read, page by page
 * (each in a `turn` of the service's queue of expensive reads, when given).
 * SQLite answers at once, so without a turn of the event loop between pages a long window (or a
 * filter that lets nothing through) would be read whole while every other request waited.
 */
export async function* windowParts(store: Store, window: TimeWindow, turn?: PageTurn): AsyncGenerator<WindowEventParts[]> {
  for await (const page of keysetPages((after, limit) => store.views.windowPage(window, after, limit), (item) => item.event, PAGE_SIZE, turn)) {
    yield page
    await nextTurn()
  }
}
