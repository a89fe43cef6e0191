import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { openKeptDatabase } from '../src/store/sqlite/native-lifetimes.js'
import { ownStore } from './own-store.js'
import { ROOT } from './paths.js'
import { startService } from './processes.js'
import { logIn } from './tokens.js'

/**
 * Issue 29, finding 1, 'history of a 1,000,000-transition event' (test/tracer/long-history.ts
 * counts what each part reads; this times it): one event with 1,000,000 transitions on a store of
 * its own. Ten clients, ten users each from an address of its own, walk its history by the
 * service's links, over and over, in a process of their own (history-readers.ts), while /health is
 * asked every 20 ms: /health's p95 (target < 100 ms). Then one client alone walks it whole by the
 * links: its slowest part (target < 100 ms). Before the history was read by keyset, ten readers of
 * a 2,000,000-transition event held /health to p50 1.5 s.
 */

const READERS = join(ROOT, 'dist/bench/history-readers.js')
const EVENT = 1
const TRANSITIONS = 1_000_000
const CLIENTS = 10
const READ_SECONDS = 10
const HEALTH_EVERY_MS = 20

export interface LongHistoryResult {
  transitions: number
  /** /health while the ten clients read. */
  healthP95Ms: number
  healthMaxMs: number
  healthAnswers: number
  /** Parts the ten clients read meanwhile, and their statuses. */
  partsBeside: number
  statusesBeside: Record<string, number>
  /** The walk alone: its parts, and the time of the slowest and the median one. */
  parts: number
  partMaxMs: number
  partP50Ms: number
}

export async function longHistory(): Promise<LongHistoryResult> {
  const users = Array.from({ length: CLIENTS }, (_, i) => `historian${i}`)
  const store = await ownStore(100, users)
  try {
    writeHistory(store.db)
    const service = await startService({ db: store.db, jwtSecret: store.secret })
    try {
      const tokens = await Promise.all(users.map((name) => logIn(service.url, { name, password: store.password })))
      const first = `/v1/event-tracer/history/${EVENT}`
      const clients = tokens.map((token, i) => ({ token, address: `127.0.0.${2 + i}` }))
      // A first walk warms the service and the file's pages up, as a reader before the measured ones would.
      await walk(service.url, first, tokens[0]!)
      const readers = spawn(process.execPath, [READERS, service.url, first, String(READ_SECONDS), JSON.stringify(clients)], { stdio: ['ignore', 'pipe', 'inherit'] })
      let said = ''
      readers.stdout.on('data', (chunk: Buffer) => void (said += chunk.toString()))
      const exited = once(readers, 'exit')
      const health: number[] = []
      let reading = true
      void exited.then(() => (reading = false))
      while (reading) {
        const started = performance.now()
        const response = await fetch(`${service.url}/health`)
        await response.arrayBuffer()
        if (response.ok) health.push(performance.now() - started)
        await sleep(HEALTH_EVERY_MS)
      }
      const [code] = (await exited) as [number | null]
      if (code !== 0) throw new Error(`the history readers exited with ${code}: ${said}`)
      const { parts: partsBeside, statuses: statusesBeside } = JSON.parse(said) as { parts: number; statuses: Record<string, number> }
      const alone = await walk(service.url, first, tokens[0]!)
      health.sort((a, b) => a - b)
      alone.sort((a, b) => a - b)
      return {
        transitions: TRANSITIONS,
        healthP95Ms: percentile(health, 95),
        healthMaxMs: health.at(-1) ?? 0,
        healthAnswers: health.length,
        partsBeside,
        statusesBeside,
        parts: alone.length,
        partMaxMs: alone.at(-1) ?? 0,
        partP50Ms: percentile(alone, 50)
      }
    } finally {
      await service.stop()
    }
  } finally {
    store.remove()
  }
}

/** The event's trace and history, written as another program (an import) would, before the service starts. */
function writeHistory(path: string) {
  const db = openKeptDatabase(path)
  try {
    db.prepare(`INSERT INTO traces (event_no, doc) VALUES (?, json_object('event_no', ?)) ON CONFLICT (event_no) DO NOTHING`).run(EVENT, EVENT)
    db.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < @count - 1)
       INSERT INTO transitions (event_no, key, "from", "to", at, by)
       SELECT @event, 'stages/baseband_conversion/sites/kko', NULL, CASE WHEN i % 2 = 0 THEN 'incomplete' ELSE 'complete' END,
              @start + i * 0.001, 'bench' FROM n`
    ).run({ count: TRANSITIONS, event: EVENT, start: Date.now() / 1000 - TRANSITIONS / 1000 })
    // Into the file, so that the service does not copy a write-ahead log of 1,000,000 rows in the middle of a measured part.
    db.pragma('wal_checkpoint(TRUNCATE)')
  } finally {
    db.close()
  }
}

/** The history walked whole by its links, one part after another: the milliseconds each part took. */
async function walk(url: string, first: string, token: string): Promise<number[]> {
  const times: number[] = []
  let next: string | null = first
  while (next !== null) {
    const started = performance.now()
    const response: Response = await fetch(url + next, { headers: { authorization: token } })
    await response.arrayBuffer()
    times.push(performance.now() - started)
    if (response.status !== 200) throw new Error(`${next} answered ${response.status}`)
    const link = response.headers.get('link')
    next = link === null ? null : (/^<([^>]+)>; rel="next"$/.exec(link)?.[1] ?? null)
  }
  return times
}

/** The nearest-rank percentile of sorted figures. */
const percentile = (sorted: readonly number[], p: number) => sorted[Math.max(0, Math.ceil((p * sorted.length) / 100) - 1)] ?? 0
