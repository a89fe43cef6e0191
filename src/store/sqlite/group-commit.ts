import type Database from 'better-sqlite3'

/** Bounds how long a burst holds the event loop and the file's lock. */
const MAX_BATCH = 256

interface Pending<A extends unknown[], R> {
  args: A
  resolve: (value: R) => void
  reject: (error: unknown) => void
}

interface BatchWrappers {
  alone<A extends unknown[], R>(work: (...args: A) => R): (...args: A) => R
  together<A extends unknown[], R>(work: (...args: A) => R): (...args: A) => R
}

type Outcome<R> = { ok: true; value: R } | { ok: false; error: unknown }

/**
 * Writes that arrive within one turn of the event loop, committed by one IMMEDIATE transaction: a
 * commit costs more than a small write, so most of it is shared (about half of an update-trace).
 * The batch runs with no savepoint, which would copy every page it changes (docs/performance.md);
 * when a write fails, it is undone and run again with a savepoint a write, so only the failed
 * write's caller rejects. A failed commit, or an error that undoes the whole transaction, rejects
 * all. Promises settle once committed, in order. A write may run twice (first undone): it must only
 * write through `db`.
 */
export class GroupCommit<A extends unknown[], R> {
  private pending: Pending<A, R>[] = []
  private readonly commit: (batch: readonly Pending<A, R>[]) => Outcome<R>[]

  /** How a write runs alone (a savepoint) and the batch together (RecordWrites keeps the audit around both); plain calls unless given. */
  constructor(db: Database.Database, write: (...args: A) => R, wrap: BatchWrappers = { alone: (work) => db.transaction(work), together: (work) => work }) {
    const alone = wrap.alone(write)
    // Whether the writes were under way when the fast attempt failed: only then can savepoints help (a lock at the start, or a failed commit, fails again).
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
          // A full disk or an I/O error makes SQLite roll back the whole transaction, the earlier writes too: the batch fails as one.
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
