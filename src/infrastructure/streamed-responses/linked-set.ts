/** A member's place in a LinkedSet: what `add` gives and `delete` takes. */
export interface Link<T extends object> {
  value: T | undefined
  previous: Link<T> | undefined
  next: Link<T> | undefined
}

/**
 * The members of a long-lived owner that come and go at request rate, linked rather than kept in a Set.
 *
 * Why: a Set that outlives its members has its hash table in V8's old generation, and the table is
 * rebuilt every few dozen adds and deletes, the new one in the old generation too. A table it replaces
 * keeps pointing at the members it held until the next full collection, and the young generation's
 * collector takes every such pointer for a live one: each member, with all it reaches (a streamed
 * response's request, reply, rows and text), is copied into the old generation, whose growth then
 * brings on full collections that hold up every request in flight (docs/performance.md). A link that
 * is deleted points at nothing.
 */
export class LinkedSet<T extends object> implements Iterable<T> {
  #first: Link<T> | undefined

  add(value: T): Link<T> {
    const link: Link<T> = { value, previous: undefined, next: this.#first }
    if (this.#first !== undefined) this.#first.previous = link
    this.#first = link
    return link
  }

  /** Once per link; a second delete of the same link does nothing. */
  delete(link: Link<T>): void {
    if (link.value === undefined) return
    if (link.previous === undefined) this.#first = link.next
    else link.previous.next = link.next
    if (link.next !== undefined) link.next.previous = link.previous
    link.value = link.previous = link.next = undefined
  }

  /** The members when iteration starts, newest first: deleting one while iterating (ending a response) skips none. */
  [Symbol.iterator](): Iterator<T> {
    const members: T[] = []
    for (let link = this.#first; link !== undefined; link = link.next) members.push(link.value!)
    return members[Symbol.iterator]()
  }
}
