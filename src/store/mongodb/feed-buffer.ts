import type { FeedTransition } from '../../domain/records.js'
import type { FeedPage } from '../port.js'

/**
 * The transitions a change stream delivered, numbered 1, 2, 3 ... in the order delivered: the
 * positions of the feed. At most `capacity` are kept; the oldest go first, half the buffer at once,
 * so adding one costs the same however full it is. A reader that falls further behind than that
 * continues from the oldest kept: it misses the ones dropped, nothing else.
 */
export class TransitionBuffer {
  private items: FeedTransition[] = []
  /** The position of items[0]. */
  private first = 1

  constructor(private readonly capacity: number) {}

  /** The position of the last transition added; 0 before the first. */
  get last(): number {
    return this.first + this.items.length - 1
  }

  add(transition: FeedTransition): void {
    this.items.push(transition)
    if (this.items.length > this.capacity) {
      const dropped = this.items.length - Math.floor(this.capacity / 2)
      this.items = this.items.slice(dropped)
      this.first += dropped
    }
  }

  /** At most `limit` transitions after `position`, and the position of the last one given. */
  after(position: number, limit: number): FeedPage {
    const start = Math.max(0, position - this.first + 1)
    const transitions = this.items.slice(start, start + limit)
    return { transitions, position: transitions.length === 0 ? position : this.first + start + transitions.length - 1 }
  }
}
