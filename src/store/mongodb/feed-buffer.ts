import type { FeedTransition } from '../../domain/records.js'
import type { FeedPage } from '../port.js'

/**
 * A feed's items, numbered 1, 2, 3 ...; past `capacity` the oldest half goes at once (an add costs the same
 * however full); a reader that far behind resumes at the oldest.
 */
export class FeedBuffer<T> {
  private items: T[] = []
  private first = 1

  constructor(private readonly capacity: number) {}

  /** The position of the last item added; 0 before the first. */
  get last(): number {
    return this.first + this.items.length - 1
  }

  add(item: T): void {
    this.items.push(item)
    if (this.items.length > this.capacity) {
      const dropped = this.items.length - Math.floor(this.capacity / 2)
      this.items = this.items.slice(dropped)
      this.first += dropped
    }
  }

  /** At most `limit` items after `position`, and the position of the last one given. */
  page(position: number, limit: number): { items: T[]; position: number } {
    const start = Math.max(0, position - this.first + 1)
    const items = this.items.slice(start, start + limit)
    return { items, position: items.length === 0 ? position : this.first + start + items.length - 1 }
  }
}

/** A buffer paged as the port's FeedPage. */
export class TransitionBuffer extends FeedBuffer<FeedTransition> {
  after(position: number, limit: number): FeedPage {
    const { items, position: last } = this.page(position, limit)
    return { transitions: items, position: last }
  }
}
