import type { EventPosition } from '../domain/records.js'

/**
 * A window read in keyset pages, each continuing after the last event of the one before: only one
 * page is held at a time, and a page costs the same at any depth.
 */
export async function* keysetPages<T>(
  readPage: (after: EventPosition | undefined, limit: number) => Promise<T[]>,
  positionOf: (row: T) => EventPosition,
  pageSize: number
): AsyncGenerator<T[]> {
  let after: EventPosition | undefined
  for (;;) {
    const page = await readPage(after, pageSize)
    if (page.length > 0) yield page
    if (page.length < pageSize) return
    after = positionOf(page[page.length - 1]!)
  }
}
