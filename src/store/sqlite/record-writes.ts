import type Database from 'better-sqlite3'
import type { KeptFacts } from '../../domain/audit/kept-facts.js'
import type { SqliteKeptInWrites } from './kept-in-writes.js'

/** What one run of a record write did to its event's kept facts; null when it changed nothing the audit reads. */
export type FactChange = readonly [eventNo: number, change: (facts: KeptFacts) => void] | null

/** The one way to write a record table (test/store/record-writes.ts holds it): statements run only inside `transaction`, which keeps their audit. */
export class RecordWrites {
  private readonly pending: Exclude<FactChange, null>[] = []
  private depth = 0

  constructor(
    private readonly db: Database.Database,
    private readonly audits: SqliteKeptInWrites
  ) {}

  /** Each run writes, then queues what `change` says it did to the facts (from its parameters, result and the writer's context). */
  statement<P extends object, C = undefined>(sql: string, change: (params: P, result: Database.RunResult, context: C) => FactChange) {
    const prepared = this.db.prepare(sql)
    const run = (params: P) => (Array.isArray(params) ? prepared.run(...(params as unknown[])) : prepared.run(params))
    return (params: P, context: C): Database.RunResult => {
      if (this.depth === 0) throw new Error('A record is written only inside RecordWrites.transaction, which keeps its audit')
      const result = run(params)
      const made = change(params, result, context)
      if (made !== null) this.pending.push(made)
      return result
    }
  }

  /** `work` as a transaction (a savepoint inside another) that keeps the audit of what it wrote; one that throws keeps nothing. */
  transaction<A extends unknown[], R>(work: (...args: A) => R): Database.Transaction<(...args: A) => R> {
    return this.db.transaction((...args: A): R => this.kept(work, args))
  }

  /** The same inside a transaction its caller holds, with no savepoint: one that throws leaves that transaction to undo, whole (GroupCommit). */
  withinTransaction<A extends unknown[], R>(work: (...args: A) => R): (...args: A) => R {
    return (...args: A): R => {
      if (!this.db.inTransaction) throw new Error('RecordWrites.withinTransaction runs only inside a transaction its caller holds')
      return this.kept(work, args)
    }
  }

  private kept<A extends unknown[], R>(work: (...args: A) => R, args: A): R {
    const from = this.pending.length
    this.depth++
    try {
      const result = work(...args)
      this.audits.keep(this.pending.splice(from))
      return result
    } finally {
      this.depth--
      this.pending.length = Math.min(this.pending.length, from)
    }
  }
}
