import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { ownStore } from './own-store.js'
import { ROOT } from './paths.js'
import { startService } from './processes.js'
import { logIn } from './tokens.js'

/**
 * Issue 29, finding 5, 'another process holds the write lock for 12 s' (test/process/lock-holder.test.ts
 * counts what is answered meanwhile; this times it): a process of its own takes SQLite's write
 * lock (BEGIN IMMEDIATE, as `sqlite3`, an import or another instance's maintenance would) and holds
 * it 12 s, while /health and an event-status read are asked every 20 ms and update-trace writes go
 * one after another: the slowest /health and read (target < 100 ms each), and what the writes
 * answered (200, or 503 with Retry-After once past SQLITE_BUSY_TIMEOUT_MS). Before lock waits
 * were taken off the event loop, /health answered in 5-10 s there.
 */

/** How long the other process holds the lock: issue 29's 12 s. */
export const HOLD_MS = 12_000
const PROBE_EVERY_MS = 20
const NATIVE = join(ROOT, 'dist/src/store/sqlite/native-lifetimes.js')

/**
 * A program for `node --input-type=module -e`: takes the write lock of the SQLite file at
 * TRACER_DB, says `held`, holds it `holdMs` on its own clock, then commits and says `released`.
 * Written as any other program would be: plain SQL (test/process/lock-holder.test.ts runs it too).
 */
export const lockHolder = (holdMs: number) => `
const { openKeptDatabase } = await import(${JSON.stringify(NATIVE)})
const db = openKeptDatabase(process.env.TRACER_DB)
db.exec('BEGIN IMMEDIATE')
db.prepare('INSERT INTO write_probe (page) VALUES (zeroblob(16))').run()
db.prepare('DELETE FROM write_probe').run()
console.log('held')
setTimeout(() => { db.exec('COMMIT'); console.log('released'); db.close() }, ${holdMs})
`

export interface LockHeldResult {
  holdMs: number
  healthAnswers: number
  healthP95Ms: number
  healthMaxMs: number
  readAnswers: number
  readMaxMs: number
  /** Every status a probe or a write was answered with, and how often. */
  statuses: Record<string, number>
  /** Writes answered 503, and how many of those carried Retry-After. */
  writesRefused: number
  refusedWithRetryAfter: number
}

export async function lockHeld(): Promise<LockHeldResult> {
  const store = await ownStore(100, ['locksmith'])
  try {
    const service = await startService({ db: store.db, jwtSecret: store.secret })
    try {
      const token = await logIn(service.url, { name: 'locksmith', password: store.password })
      const statuses: Record<string, number> = {}
      const count = (what: string, status: number) => void (statuses[`${what} ${status}`] = (statuses[`${what} ${status}`] ?? 0) + 1)
      const timed = async (what: string, url: string, init?: RequestInit) => {
        const started = performance.now()
        const response = await fetch(url, init)
        await response.arrayBuffer()
        count(what, response.status)
        return { ms: performance.now() - started, response }
      }
      // The event read, written first, so that the read has something to find.
      const write = (eventNo: number) =>
        timed('update-trace', `${service.url}/v1/event-tracer/update-trace`, {
          method: 'POST',
          headers: { authorization: token, 'content-type': 'application/json' },
          body: JSON.stringify({ event: eventNo, site: 'chime', stage: 'baseband_conversion', status: 'complete' })
        })
      await write(1)

      const holder = spawn(process.execPath, ['--input-type=module', '-e', lockHolder(HOLD_MS)], { env: { PATH: process.env.PATH ?? '', TRACER_DB: store.db }, stdio: ['ignore', 'pipe', 'inherit'] })
      const exited = once(holder, 'exit')
      try {
        const lines = createInterface({ input: holder.stdout })[Symbol.asyncIterator]()
        if ((await lines.next()).value !== 'held') throw new Error('the lock holder did not take the lock')
        let held = true
        void lines.next().then(() => (held = false))
        let writesRefused = 0
        let refusedWithRetryAfter = 0
        const writer = (async () => {
          for (let eventNo = 2; held; eventNo++) {
            const { response } = await write(eventNo)
            if (response.status === 503) {
              writesRefused += 1
              if (response.headers.get('retry-after') !== null) refusedWithRetryAfter += 1
            }
          }
        })()
        const health: number[] = []
        const reads: number[] = []
        while (held) {
          health.push((await timed('/health', `${service.url}/health`)).ms)
          reads.push((await timed('event-status', `${service.url}/v1/event-tracer/event-status/1`, { headers: { authorization: token } })).ms)
          await sleep(PROBE_EVERY_MS)
        }
        await writer
        health.sort((a, b) => a - b)
        reads.sort((a, b) => a - b)
        return {
          holdMs: HOLD_MS,
          healthAnswers: health.length,
          healthP95Ms: health[Math.max(0, Math.ceil(0.95 * health.length) - 1)] ?? 0,
          healthMaxMs: health.at(-1) ?? 0,
          readAnswers: reads.length,
          readMaxMs: reads.at(-1) ?? 0,
          statuses,
          writesRefused,
          refusedWithRetryAfter
        }
      } finally {
        if (holder.exitCode === null) holder.kill('SIGKILL')
        await exited
      }
    } finally {
      await service.stop()
    }
  } finally {
    store.remove()
  }
}
