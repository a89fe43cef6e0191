import type Database from 'better-sqlite3'
import { openKeptDatabase } from '../src/store/sqlite/native-lifetimes.js'

/** One statement run through better-sqlite3 in this process: its text, its parameters, and the rows it gave. */
export interface StatementRun {
  sql: string
  args: unknown[]
  rows: number
}

type Method = 'all' | 'get' | 'iterate' | 'run'

let log: StatementRun[] | undefined

/**
 * Every statement any connection of this process runs is noted while a log is open: better-sqlite3's
 * Statement, patched once, in tests only. The store's statements are the service's own; this counts
 * them and the rows they give, so a test can hold a read to what it costs, by count rather than by time.
 */
function patchOnce() {
  // Kept alive as every connection must be: on Node 24 a collected one aborts the process (native-lifetimes.ts).
  const probe = openKeptDatabase(':memory:')
  const prototype = Object.getPrototypeOf(probe.prepare('SELECT 1')) as Record<Method, (...args: unknown[]) => unknown> & { __counted?: true }
  probe.close()
  if (prototype.__counted === true) return
  prototype.__counted = true
  for (const method of ['all', 'get', 'iterate', 'run'] as const) {
    const original = prototype[method]
    prototype[method] = function (this: { source: string }, ...args: unknown[]) {
      const result = original.apply(this, args)
      if (log === undefined) return result
      const run: StatementRun = { sql: this.source, args, rows: 0 }
      log.push(run)
      if (method === 'all') run.rows = (result as unknown[]).length
      else if (method === 'get') run.rows = result === undefined ? 0 : 1
      else if (method === 'run') run.rows = 0
      else return counted(result as IterableIterator<unknown>, run)
      return result
    }
  }
}

function* counted(rows: IterableIterator<unknown>, run: StatementRun) {
  for (const row of rows) {
    run.rows++
    yield row
  }
}

/** The statements run while `work` runs, which sees them noted as they run (nested logs are not kept apart). */
export async function statementsOf<T>(work: (statements: readonly StatementRun[]) => Promise<T>): Promise<{ result: T; statements: StatementRun[] }> {
  patchOnce()
  const statements: StatementRun[] = []
  const outer = log
  log = statements
  try {
    return { result: await work(statements), statements }
  } finally {
    log = outer
    outer?.push(...statements)
  }
}

/** The record tables whose rows an event gains without end: its history and its heartbeats. */
const GROWING = /\b(transitions|heartbeats)\b/

/**
 * Why the statement, as planned on `db`, may read rows without bound as one event's history or
 * heartbeats grow, or null when it may not: every step on those tables must be an index search; one
 * that is not a lookup of a single row (by rowid) is a range of the event's rows, which must be cut
 * by a LIMIT (not entered by an OFFSET, which steps over every row before it), read in the index's
 * order (no sort of the range at its level of the query), and not aggregated (COUNT, MAX, GROUP BY ...
 * read every row of it).
 */
export function unboundedBy(db: Database.Database, run: StatementRun): string | null {
  if (!GROWING.test(run.sql)) return null
  const plan = db.prepare<unknown[], { id: number; parent: number; detail: string }>(`EXPLAIN QUERY PLAN ${run.sql}`).all(...run.args)
  const steps = plan.filter(({ detail }) => GROWING.test(detail))
  const scans = steps.filter(({ detail }) => !detail.startsWith('SEARCH '))
  if (scans.length > 0) return `scans: ${scans.map(({ detail }) => detail).join('; ')}`
  const ranges = steps.filter(({ detail }) => !/\(rowid=\?\)/.test(detail))
  if (ranges.length === 0) return null
  const named = ranges.map(({ detail }) => detail).join('; ')
  if (/\b(count|sum|total|max|min|avg|group_concat)\s*\(|\bGROUP\s+BY\b/i.test(run.sql)) return `aggregates over ${named}`
  const sorted = plan.filter(({ detail, parent }) => detail.startsWith('USE TEMP B-TREE') && ranges.some((range) => range.parent === parent))
  if (sorted.length > 0) return `sorts every row of ${named}`
  if (!/\bLIMIT\b/i.test(run.sql)) return `no LIMIT cuts ${named}`
  if (/\bOFFSET\b/i.test(run.sql)) return `an OFFSET steps over every row before it in ${named}`
  return null
}
