import { toMb } from './rss.js'

/** Where a process's resident memory is, in MB, from the service's own /metrics (prom-client's default metrics). */
export interface MemoryBreakdown {
  rssMb: number
  /** V8's heap as allocated from the system, and the part of it live objects used at the last collection. */
  heapTotalMb: number
  heapUsedMb: number
  /** Memory of C++ objects tied to JS ones (Buffers, ArrayBuffers), outside V8's heap. */
  externalMb: number
  /** Whatever else is resident: compiled code, stacks, the C allocator's arenas (SQLite's cache among them). */
  restMb: number
}

const METRICS = {
  rss: 'process_resident_memory_bytes',
  heapTotal: 'nodejs_heap_size_total_bytes',
  heapUsed: 'nodejs_heap_size_used_bytes',
  external: 'nodejs_external_memory_bytes'
} as const

/** The breakdown from Prometheus text; throws when one of the four metrics is missing. */
export function parseMemory(metricsText: string): MemoryBreakdown {
  const value = (name: string) => {
    const match = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)`, 'm').exec(metricsText)
    if (match === null) throw new Error(`/metrics has no ${name}`)
    return toMb(Number(match[1]))
  }
  const rssMb = value(METRICS.rss)
  const heapTotalMb = value(METRICS.heapTotal)
  const externalMb = value(METRICS.external)
  return { rssMb, heapTotalMb, heapUsedMb: value(METRICS.heapUsed), externalMb, restMb: rssMb - heapTotalMb - externalMb }
}

/**
 * Reads the service's /metrics. It needs no token unless METRICS_REQUIRE_TOKEN=true, which the bench
 * does not set; the token goes along anyway, so the reading works either way. prom-client reads the
 * memory gauges before the audit gauges, whose collect may run the 7-day audit (at most once a
 * minute), so the figures are those of the moment the scrape arrived.
 */
export async function readMemory(url: string, token: string): Promise<MemoryBreakdown> {
  const response = await fetch(`${url}/metrics`, { headers: { authorization: token } })
  const text = await response.text()
  if (!response.ok) throw new Error(`/metrics answered ${response.status}: ${text.slice(0, 300)}`)
  return parseMemory(text)
}

const whole = (value: number) => value.toFixed(0)

/** "RSS 205 MB: V8 heap 120 MB (used 80), external 10 MB, the rest (code, stacks, C allocator) 75 MB". */
export function describeMemory(memory: MemoryBreakdown): string {
  return (
    `RSS ${whole(memory.rssMb)} MB: V8 heap ${whole(memory.heapTotalMb)} MB (used ${whole(memory.heapUsedMb)}), ` +
    `external ${whole(memory.externalMb)} MB, the rest (code, stacks, C allocator) ${whole(memory.restMb)} MB`
  )
}
