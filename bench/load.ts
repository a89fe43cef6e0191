import autocannon from 'autocannon'
import { cpuSeconds, processTree } from './process-tree.js'
import { sampleRss, toMb } from './rss.js'

export interface LoadOptions {
  url: string
  /** The server process whose RSS and CPU time (its workers' included) are measured while the load runs. */
  pid: number
  connections: number
  seconds: number
  /** A fixed number of requests instead of `seconds`: a cost per request over a count, not over a time. */
  amount?: number
  requests: autocannon.Request[]
  /** Requests a second over all connections; unset: as fast as the server answers. */
  overallRate?: number
  /** Called about every second with the seconds elapsed (the soak samples RSS after its warm-up). */
  onSecond?: (elapsed: number) => void
}

export interface LoadResult {
  seconds: number
  /** Responses received, whatever their status. */
  responses: number
  rps: number
  /** Latency percentiles in ms over every response, exact (not autocannon's whole-ms histogram). */
  p50: number
  p99: number
  /** autocannon's own p99 (whole ms; corrected for coordinated omission when a rate is set). */
  autocannonP99: number
  statusCounts: Record<string, number>
  /** Connection errors and timeouts (autocannon counts timeouts among its errors; here they are apart). */
  transportErrors: number
  timeouts: number
  peakRssMb: number
  lastRssMb: number
  /**
   * Cores used on average during the run by the server's processes and by this process, which runs
   * autocannon: on a machine where both share the cores, how they shared them.
   */
  serverCores: number
  loadGeneratorCores: number
  /** CPU time (user and system) of the server's processes over the responses: µs a request. */
  serverCpuUsPerRequest: number
}

/** Runs autocannon once and measures what the table needs. autocannon makes all the requests. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const times: number[] = []
  const rss = sampleRss(options.pid)
  const server = processTree(options.pid)
  const cpuBefore = { server: cpuSeconds(server), self: cpuSeconds([process.pid]) }
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: options.url,
        connections: options.connections,
        ...(options.amount === undefined ? { duration: options.seconds } : { amount: options.amount }),
        requests: options.requests,
        ...(options.overallRate === undefined ? {} : { overallRate: options.overallRate })
      },
      (error, done) => (error ? reject(error instanceof Error ? error : new Error(String(error))) : resolve(done))
    )
    instance.on('response', (_client, _status, _bytes, responseTime) => times.push(responseTime))
    let elapsed = 0
    instance.on('tick', () => options.onSecond?.(++elapsed))
  })
  const memory = rss.stop()
  const serverCpu = cpuSeconds(server) - cpuBefore.server
  const cores = (before: number, after: number) => (after - before) / result.duration
  times.sort((a, b) => a - b)
  const statusCounts: Record<string, number> = {}
  for (const [status, stats] of Object.entries(result.statusCodeStats ?? {})) statusCounts[status] = stats.count ?? 0
  return {
    seconds: result.duration,
    responses: times.length,
    rps: times.length / result.duration,
    p50: percentile(times, 0.5),
    p99: percentile(times, 0.99),
    autocannonP99: result.latency.p99,
    statusCounts,
    transportErrors: result.errors - result.timeouts,
    timeouts: result.timeouts,
    peakRssMb: toMb(memory.peak),
    lastRssMb: toMb(memory.last),
    serverCores: serverCpu / result.duration,
    loadGeneratorCores: cores(cpuBefore.self, cpuSeconds([process.pid])),
    serverCpuUsPerRequest: times.length > 0 ? (serverCpu * 1e6) / times.length : Number.NaN
  }
}

/** Nearest-rank percentile of sorted values; NaN when there are none. */
export function percentile(sorted: readonly number[], fraction: number): number {
  if (sorted.length === 0) return Number.NaN
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))
  return sorted[rank]!
}

/** Responses whose status is not `expected` (200 unless the scenario is about an error answer). */
export function unexpectedStatuses(statusCounts: Record<string, number>, expected: number): number {
  return Object.entries(statusCounts).reduce((sum, [status, count]) => (Number(status) === expected ? sum : sum + count), 0)
}
