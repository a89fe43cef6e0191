// One text over both stores: SQLite answers at once (a transaction must not yield), MongoDB with promises.

/** A value a store answers at once (SQLite) or with a promise (MongoDB). */
export type Maybe<T> = T | Promise<T>

/** A text that yields the store's answers to its runner and ends with a T. */
export type Answers<T> = Generator<unknown, T, unknown>

/** One answer of the store, as the generator receives it. */
export function* answer<T>(value: Maybe<T>): Answers<T> {
  // What the runner sends back for a yielded value is that value, awaited.
  return (yield value) as T
}

/** Runs a generator of store answers: at once while they come at once, awaiting from the first promise on. */
export function answers<T>(steps: Answers<T>): Maybe<T> {
  let next = steps.next()
  while (!next.done) {
    if (next.value instanceof Promise) return awaited(steps, next.value)
    next = steps.next(next.value)
  }
  return next.value
}

async function awaited<T>(steps: Answers<T>, first: Promise<unknown>): Promise<T> {
  let next = steps.next(await first)
  while (!next.done) next = steps.next(await next.value)
  return next.value
}

/** An answer of a store that answers at once (SQLite): a promise there would hold a transaction open across the event loop. */
export function atOnce<T>(value: Maybe<T>): T {
  if (value instanceof Promise) throw new Error('The SQLite store answers at once')
  return value
}

/** `work`, with `instead` answering for what it throws, at once or as a rejection. */
export function caught<T>(work: () => Maybe<T>, instead: (error: unknown) => Maybe<T>): Maybe<T> {
  let done: Maybe<T>
  try {
    done = work()
  } catch (error) {
    return instead(error)
  }
  return done instanceof Promise ? done.catch(instead) : done
}
