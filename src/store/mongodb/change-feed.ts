import type { Document } from 'mongodb'
import type { ChangeReader } from './change-reader.js'
import { FeedBuffer } from './feed-buffer.js'

/** Changes taken in one catch-up at most: a flood of writes never holds a reader; the next call goes on. */
const CHANGES_PER_CATCH_UP = 1_000

/**
 * A feed over one change stream, read on demand: each call first takes what the stream has (writes
 * acknowledged by a majority before the call are there), turns each change into the feed's items,
 * numbers them locally and keeps them in a bounded buffer, from which positions are served. Each
 * feed has a reader and a buffer of its own: two feeds share nothing but the database.
 */
export class ChangeFeed<T> {
  private readonly buffer: FeedBuffer<T>
  private reading: Promise<void> | undefined
  private nextReading: Promise<void> | undefined

  constructor(
    private readonly reader: ChangeReader,
    private readonly itemsIn: (change: Document) => T[],
    capacity: number
  ) {
    this.buffer = new FeedBuffer<T>(capacity)
  }

  async position(): Promise<number> {
    await this.catchUp()
    return this.buffer.last
  }

  async since(position: number, limit: number): Promise<{ items: T[]; position: number }> {
    await this.catchUp()
    return this.buffer.page(position, limit)
  }

  close(): Promise<void> {
    return this.reader.close()
  }

  /**
   * One read of the stream at a time. A caller that comes while one is under way waits for the next,
   * which starts after it and is shared by every such caller: the one under way may have passed the
   * point where the caller's own writes were acknowledged.
   */
  private catchUp(): Promise<void> {
    if (this.reading === undefined) return this.read()
    this.nextReading ??= this.reading
      .catch(() => {})
      .then(() => {
        this.nextReading = undefined
        return this.read()
      })
    return this.nextReading
  }

  private read(): Promise<void> {
    const reading = this.reader
      .read(CHANGES_PER_CATCH_UP, (change) => {
        for (const item of this.itemsIn(change)) this.buffer.add(item)
      })
      .finally(() => {
        if (this.reading === reading) this.reading = undefined
      })
    this.reading = reading
    return reading
  }
}
