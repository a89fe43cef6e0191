import type Database from 'better-sqlite3'

/** Writes one transaction may carry: bounds how long a burst holds the event loop and the file's lock. */
const MAX_BATCH = 256

interface Pending<A extends unknown[], R> {
  args: A
  resolve: (value: R) => void
  reject: (error: unknown) => void
}

/** How a batch's writes are wrapped: each alone (a savepoint), or all together inside the batch's transaction. */
export interface BatchWrappers {
  alone<A extends unknown[], R>(work: (...args: A) => R): (...args: A) => R
  together<A extends unknown[], R>(work: (...args: A) => R): (...args: A) => R
}

type Outcome<R> = { ok: true; value: R } | { ok: false; error: unknown }

/**
 * Writes that arrive within one turn of the event loop, committed by one IMMEDIATE transaction.
 * A commit costs more than a small write (the write-ahead log appends every page the transaction
 * touched, and the lock is taken and given back), so under concurrent writes most of it is shared:
 * about half of what each update-trace cost SQLite. Usually every write succeeds, and the batch
 * runs as one transaction with no savepoint at all: a savepoint keeps a copy of every page it
 * changes until it ends, a cost every update-trace would pay (docs/performance.md). When a write fails the batch is undone and run again with a savepoint for each
 * write, so that one that fails is undone alone and its caller alone rejects; a commit that fails,
 * or an error that undoes the whole transaction, rejects them all, as their own commits would have
 * failed. Each caller's promise settles only once its write is committed, and writes apply in the
 * order they were submitted. A write may therefore run twice (the first time undone): it must do
 * nothing but write through `db`.
 */
export class GroupCommit<A extends unknown[], R> {
  private pending: Pending<A, R>[] = []
  private readonly commit: (batch: readonly Pending<A, R>[]) => Outcome<R>[]

  /**
   * `wrap.alone` makes a write a transaction of its own (a savepoint of the batch's), and
   * `wrap.together` runs the whole batch inside the batch's transaction with no savepoint of its
   * own (RecordWrites keeps the audit of what they wrote around both); plain calls unless given.
   */
  constructor(db: Database.Database, write: (...args: A) => R, wrap: BatchWrappers = { alone: (work) => db.transaction(work), together: (work) => work }) {
    // A transaction function called inside another runs as a savepoint.
    const alone = wrap.alone(write)
    // Whether the batch's writes were under way when the fast attempt failed: only then can a
    // savepoint a write change the outcome. A lock that kept the transaction from beginning, or a
    // commit that failed, would fail the second attempt alike.
    let writing = false
    const atOnce = db.transaction(
      wrap.together((batch: readonly Pending<A, R>[]) => {
        writing = true
        const outcomes = batch.map((item): Outcome<R> => ({ ok: true, value: write(...item.args) }))
        writing = false
        return outcomes
      })
    )
    const together = db.transaction((batch: readonly Pending<A, R>[]) =>
      batch.map((item): Outcome<R> => {
        try {
          return { ok: true, value: alone(...item.args) }
        } catch (error) {
          // Some errors (a full disk, an I/O error) make SQLite roll back the whole transaction:
          // the writes before this one are undone too, so the batch fails as one.
          if (!db.inTransaction) throw error
          return { ok: false, error }
        }
      })
    )
    this.commit = (batch) => {
      writing = false
      try {
        return atOnce.immediate(batch)
      } catch (error) {
        if (!writing) throw error
        // A write failed and the batch was undone whole: again, each write in its own savepoint.
        return together.immediate(batch)
      }
    }
  }

  submit(...args: A): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      if (this.pending.length === 0) setImmediate(() => this.flush())
      this.pending.push({ args, resolve, reject })
    })
  }

  private flush(): void {
    const waiting = this.pending
    this.pending = []
    for (let start = 0; start < waiting.length; start += MAX_BATCH) {
      const batch = waiting.slice(start, start + MAX_BATCH)
      let outcomes: Outcome<R>[]
      try {
        outcomes = this.commit(batch)
      } catch (error) {
        for (const item of batch) item.reject(error)
        continue
      }
      outcomes.forEach((outcome, index) => (outcome.ok ? batch[index]!.resolve(outcome.value) : batch[index]!.reject(outcome.error)))
    }
  }
}
