import type { EventPosition } from '../domain/records.js'
import { EventNumberSet } from './event-number-set.js'

/** Waits for the turn to read a page, resolving to the function that ends it (see window-reads.ts). */
export type PageTurn = () => Promise<() => void>

/**
 * A window read in keyset pages, one held at a time, each at the same cost at any depth; with `turn`,
 * each in a turn of the fair queue of expensive reads. An event re-posted later during the read would
 * be met again: the numbers yielded are remembered (EventNumberSet) and each event is yielded once.
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
