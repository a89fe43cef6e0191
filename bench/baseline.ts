import { readFileSync } from 'node:fs'

/** The figures of the same bench run at another commit on this machine, read from its report (latest.md). */
export interface BaselineRun {
  commit: string
  date: string
  /** By scenario title, as the report's table names it. */
  rows: Map<string, { rps: number; p99: number }>
}

/** The first number of a table cell, whatever follows it (`7,719 ✓ met (≥ 5,000/s)`). */
const firstNumber = (cell: string) => Number(/[\d,]+(\.\d+)?/.exec(cell)?.[0].replaceAll(',', '') ?? Number.NaN)

/**
 * Reads a report written by `npm run bench` (at this commit or an earlier one: the table's first
 * five columns have not changed since the bench began): its commit, date and each scenario's median
 * req/s and p99. BENCH_BASELINE names the file; the comparison is fair only when both runs were made
 * on the same machine, one after the other.
 */
export function readBaseline(path: string): BaselineRun {
  const text = readFileSync(path, 'utf8')
  const commit = /^- Commit: ([0-9a-f]{7,40})/m.exec(text)?.[1]
  const date = /^# frb-tracer bench — (\S+)/m.exec(text)?.[1]
  if (commit === undefined || date === undefined) throw new Error(`${path} is not a report of npm run bench (no commit or date)`)
  const rows = new Map<string, { rps: number; p99: number }>()
  for (const line of text.split('\n')) {
    const cells = line.split('|').map((cell) => cell.trim())
    // | Scenario | Conns | req/s | p50 ms | p99 ms | ...: the main table's rows, not its header or the other tables'.
    if (cells.length < 11 || cells[1] === 'Scenario' || cells[1]!.startsWith('---')) continue
    const rps = firstNumber(cells[3]!)
    const p99 = firstNumber(cells[5]!)
    if (!rows.has(cells[1]!) && !Number.isNaN(rps) && !Number.isNaN(p99)) rows.set(cells[1]!, { rps, p99 })
  }
  return { commit, date, rows }
}
