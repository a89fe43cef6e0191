import type { EventPosition } from '../domain/records.js'
import { EventNumberSet } from './event-number-set.js'

/** Waits for the turn to read a page, resolving to the function that ends it (see window-reads.ts). */
export type PageTurn = () => Promise<() => void>

/**
 * A window read in keyset pages, each continuing after the last event of the one before: only one
 * page is held at a time, and a page costs the same at any depth. With `turn`, each page is read
 * in a turn of the service's fair queue of expensive reads.
 *
 * Each event is yielded once. An event re-posted with a later time while the read goes on moves
 * past where it was read and would be met again: the numbers of the events yielded are remembered
 * (about two bytes each, for the length of the read: see EventNumberSet) and a second meeting is
 * dropped. The element already sent is the event as it stood when it was read.
 */
export async function* keysetPages<T>(
  readPage: (after: EventPosition | undefined, limit: number) => Promise<T[]>,
  positionOf: (row: T) => EventPosition,
  pageSize: number,
  turn?: PageTurn
): AsyncGenerator<T[]> {
  let after: EventPosition | undefined
  const yielded = new EventNumberSet()
  for (;;) {
    const page = await inTurn(turn, () => readPage(after, pageSize))
    const firstMeetings = page.filter((row) => yielded.add(positionOf(row).event_no))
    if (firstMeetings.length > 0) yield firstMeetings
    if (page.length < pageSize) return
    after = positionOf(page[page.length - 1]!)
  }
}

async function inTurn<T>(turn: PageTurn | undefined, read: () => Promise<T>): Promise<T> {
  if (turn === undefined) return read()
  const end = await turn()
  try {
    return await read()
  } finally {
    end()
  }
}
