import type { EventPosition } from '../domain/records.js'
import { EventNumberSet } from './event-number-set.js'

/** Waits for the turn to read a page, resolving to the function that ends it (see window-reads.ts). */
export type PageTurn = () => Promise<() => void>

/** A window read in keyset pages (each in a turn of the fair queue given `turn`), yielding each event once though a re-post moves it ahead. */
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
