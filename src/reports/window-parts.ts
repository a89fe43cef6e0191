import { setImmediate as nextTurn } from 'node:timers/promises'
import type { WindowEventParts } from '../domain/records.js'
import type { TimeWindow } from '../domain/time-window.js'
import { keysetPages, type PageTurn } from '../store/pages.js'
import type { Store } from '../store/port.js'

// Bounds one report's memory: a range scan, then a few index searches an event (see WindowEventParts).
const PAGE_SIZE = 200

/** A window's events with what the audit and stage latency read, page by page: SQLite answers at once, so pages yield to the event loop. */
export async function* windowParts(store: Store, window: TimeWindow, turn?: PageTurn): AsyncGenerator<WindowEventParts[]> {
  for await (const page of keysetPages((after, limit) => store.views.windowPage(window, after, limit), (item) => item.event, PAGE_SIZE, turn)) {
    yield page
    await nextTurn()
  }
}
