import { setTimeout as sleep } from 'node:timers/promises'
import { readMemory, type MemoryBreakdown } from './memory.js'
import type { RunningServer } from './processes.js'
import { rssBytes, sampleRss, toMb } from './rss.js'

const DAY_MS = 86_400_000

export interface FullYearResult {
  baselineMb: number
  peakMb: number
  increaseMb: number
  rows: number
  megabytes: number
  seconds: number
  /** Where the memory was right after the request (read once the peak is measured, so the reading cannot raise it). */
  memory: MemoryBreakdown
}

/** The window reports read over a year: the baseband callbacks (a JSON array), and the audit (its `events`). */
export type YearReport = 'baseband-callbacks' | 'audit'

/**
 * RSS growth of the server during one request over the newest 365 days, and how long it took. On a
 * fresh process: one that has just served heavy load keeps a grown heap, which would hide the growth
 * of this request. One small request first, so compiled code and prepared statements are not counted.
 */
export async function fullYearRss(start: () => Promise<RunningServer>, token: string, newest: number, report: YearReport = 'baseband-callbacks'): Promise<FullYearResult> {
  const server = await start()
  try {
    const end = newest + 1000
    await windowReport(server.url, token, end - DAY_MS, end, report)
    await sleep(1000)
    const baseline = rssBytes(server.pid)
    const sampler = sampleRss(server.pid, 20)
    const started = performance.now()
    const { rows, bytes } = await windowReport(server.url, token, end - 365 * DAY_MS, end, report)
    const seconds = (performance.now() - started) / 1000
    const { peak } = sampler.stop()
    const memory = await readMemory(server.url, token)
    return {
      baselineMb: toMb(baseline),
      peakMb: toMb(peak),
      increaseMb: toMb(Math.max(0, peak - baseline)),
      rows,
      megabytes: bytes / 1024 / 1024,
      seconds,
      memory
    }
  } finally {
    await server.stop()
  }
}

/** One request, read to the end; the body must be whole JSON (a stream cut short would not parse). */
async function windowReport(url: string, token: string, start: number, end: number, report: YearReport): Promise<{ rows: number; bytes: number }> {
  const query = new URLSearchParams({ start_time_utc: new Date(start).toISOString(), end_time_utc: new Date(end).toISOString() })
  const response = await fetch(`${url}/v1/event-tracer/${report}?${query.toString()}`, { headers: { authorization: token } })
  const text = await response.text()
  if (!response.ok) throw new Error(`${report} answered ${response.status}: ${text.slice(0, 300)}`)
  const body = JSON.parse(text) as unknown[] | { events: unknown[] }
  return { rows: Array.isArray(body) ? body.length : body.events.length, bytes: Buffer.byteLength(text) }
}
