import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startCpuAccounting, type CpuShare } from './cpu-share.js'
import { runLoad, type LoadResult } from './load.js'
import { machineFacts } from './machine.js'
import { RESULTS_DIR } from './paths.js'
import { stopChildrenOnSignals, type RunningServer } from './processes.js'
import { rssBytes, toMb } from './rss.js'
import { prepareBench, type Bench } from './setup.js'
import { kindPercentile, soakMix, type KindTally } from './soak-mix.js'
import { logIn } from './tokens.js'

/** `npm run soak` (issue 6): a minute of mixed traffic at a steady rate against one service process. */

const SOAK_STORE = { name: 'soak-50k', events: 50_000, days: 365, seed: 1 }
const SECONDS = 60
const RATE = 1000
/** Enough that a slow login or a 30-row callback page on one connection leaves the others the rate. */
const CONNECTIONS = 50
const WARMUP_SECONDS = 10
const CAPACITY_SECONDS = 10
/** Issue 6: RSS at the end within 20% of RSS after the warm-up. */
const RSS_GROWTH_LIMIT = 0.2

interface SoakResult {
  load: LoadResult
  tallies: KindTally[]
  rssAfterWarmupMb: number
  rssEndMb: number
  /** The same mix for a few seconds without a rate, after the soak: how much headroom 1,000 req/s leaves. */
  capacity: LoadResult
}

async function main(): Promise<void> {
  stopChildrenOnSignals()
  const cpuOfOthers = startCpuAccounting()
  const bench = await prepareBench(SOAK_STORE)
  let service: RunningServer | undefined
  let result: SoakResult
  try {
    service = await bench.startService()
    result = await soak(bench, service)
  } finally {
    await service?.stop()
  }
  const report = renderSoakReport(bench, result, cpuOfOthers())
  mkdirSync(RESULTS_DIR, { recursive: true })
  writeFileSync(join(RESULTS_DIR, 'soak.md'), report)
  process.stdout.write(report)
}

async function soak(bench: Bench, service: RunningServer): Promise<SoakResult> {
  const token = await logIn(service.url, bench.user)
  const mix = {
    token,
    username: bench.user.name,
    password: bench.user.password,
    sites: bench.sites,
    eventCount: bench.store.spec.events,
    oldest: bench.store.oldest,
    newest: bench.store.newest
  }
  const { requests, tallies } = soakMix(mix)
  let rssAfterWarmup = Number.NaN
  process.stderr.write(`soak: ${SECONDS} s at ${RATE} req/s against ${service.url}\n`)
  const load = await runLoad({
    url: service.url,
    pid: service.pid,
    connections: CONNECTIONS,
    seconds: SECONDS,
    overallRate: RATE,
    requests,
    onSecond: (elapsed) => {
      if (elapsed === WARMUP_SECONDS) rssAfterWarmup = rssBytes(service.pid)
      if (elapsed % 10 === 0) process.stderr.write(`soak: ${elapsed} s, RSS ${toMb(rssBytes(service.pid)).toFixed(0)} MB\n`)
    }
  })
  const rssEndMb = toMb(rssBytes(service.pid))
  const capacity = await runLoad({ url: service.url, pid: service.pid, connections: CONNECTIONS, seconds: CAPACITY_SECONDS, requests: soakMix(mix).requests })
  process.stderr.write(`soak: unthrottled, the mix reaches ${capacity.rps.toFixed(0)} req/s\n`)
  return { load, tallies, rssAfterWarmupMb: toMb(rssAfterWarmup), rssEndMb, capacity }
}

const mark = (met: boolean) => (met ? '✓ met' : '✗ missed')
const ms = (n: number) => (Number.isNaN(n) ? '–' : n < 10 ? n.toFixed(2) : n.toFixed(1))

function renderSoakReport(bench: Bench, result: SoakResult, cpu: CpuShare): string {
  const { load, tallies } = result
  const count = (test: (status: number) => boolean) =>
    Object.entries(load.statusCounts).reduce((sum, [status, n]) => (test(Number(status)) ? sum + n : sum), 0)
  const serverErrors = count((status) => status >= 500)
  const otherNon2xx = Object.entries(load.statusCounts)
    .filter(([status]) => Number(status) < 200 || (Number(status) >= 300 && Number(status) < 500))
    .map(([status, n]) => `${n} × ${status}`)
  const ratio = result.rssEndMb / result.rssAfterWarmupMb
  const store = bench.store
  const lines = [
    `# frb-tracer soak — ${new Date().toISOString()}`,
    '',
    ...machineFacts().map((fact) => `- ${fact}`),
    `- Store: ${store.spec.events.toLocaleString('en-US')} events over ${store.spec.days} days (seed ${store.spec.seed}), ` +
      `${store.reused ? 'reused' : `seeded by this run in ${store.seedSeconds.toFixed(1)} s`}`,
    `- Load: ${SECONDS} s at ${RATE} req/s (autocannon overallRate, ${CONNECTIONS} connections) against one \`tracer serve\` ` +
      'process: NODE_ENV=production, LOG_LEVEL=info, AUTH_RATE_LIMIT raised to 1,000,000 (the logins are the same user ' +
      'from one address; at the default 10 a minute most would be 429).',
    `- Other processes used ${cpu.othersPercent.toFixed(0)}% of the machine's CPU during the run (hypervisor steal ${cpu.stealPercent.toFixed(1)}%)`,
    '',
    '| Responses | req/s | 5xx | Other non-2xx | Transport errors | Timeouts | p50 ms | p99 ms | p99 ms (autocannon, CO-corrected) |',
    '| ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |',
    `| ${load.responses.toLocaleString('en-US')} | ${load.rps.toFixed(0)} | ${serverErrors} | ${otherNon2xx.join(', ') || '0'} | ` +
      `${load.transportErrors} | ${load.timeouts} | ${ms(load.p50)} | ${ms(load.p99)} | ${load.autocannonP99} |`,
    '',
    `- Headroom: after the soak, the same mix without a rate reached ${result.capacity.rps.toFixed(0)} req/s ` +
      `(p50 ${ms(result.capacity.p50)} ms, p99 ${ms(result.capacity.p99)} ms), so ${RATE} req/s is ` +
      `${((100 * RATE) / result.capacity.rps).toFixed(0)}% of what this machine serves with the load generator on it. ` +
      'autocannon paces a rate per second: each connection sends its share at the start of every second, so the ' +
      'service meets every second as a burst of 50 requests in flight until the 1,000 are answered. The latencies ' +
      'above are those of that burst, not of requests spread evenly over the second.',
    `- RSS after the ${WARMUP_SECONDS} s warm-up: ${result.rssAfterWarmupMb.toFixed(0)} MB; at the end: ${result.rssEndMb.toFixed(0)} MB ` +
      `(×${ratio.toFixed(2)}); highest sampled: ${load.peakRssMb.toFixed(0)} MB`,
    '',
    '## Targets',
    '',
    `- ${mark(serverErrors === 0)} — 5xx responses: ${serverErrors} (target 0)`,
    `- ${mark(load.transportErrors + load.timeouts === 0)} — transport errors and timeouts: ${load.transportErrors + load.timeouts} (target 0)`,
    `- ${mark(Math.abs(ratio - 1) <= RSS_GROWTH_LIMIT)} — RSS at the end vs after warm-up: ×${ratio.toFixed(2)} (target within 20%)`,
    '',
    '## By kind',
    '',
    '| Kind | Share ‰ | Responses | Statuses | p50 ms | p99 ms |',
    '| --- | ---: | ---: | --- | ---: | ---: |',
    ...tallies.map(
      (tally) =>
        `| ${tally.name} | ${tally.weight} | ${tally.latencies.length.toLocaleString('en-US')} | ` +
        `${Object.entries(tally.statuses).map(([status, n]) => `${n} × ${status}`).join(', ') || '–'} | ` +
        `${ms(kindPercentile(tally, 0.5))} | ${ms(kindPercentile(tally, 0.99))} |`
    ),
    '',
    'Latency by kind: from building the request (just before it is written) to its parsed response.',
    ''
  ]
  return lines.join('\n')
}

await main().catch((error: unknown) => {
  process.stderr.write(`soak: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  process.exitCode = 1
})
