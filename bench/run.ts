import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { cpuCost, type CpuCost } from './cpu-cost.js'
import { NOISY_PERCENT, startCpuAccounting } from './cpu-share.js'
import { fullYearRss, type FullYearResult } from './full-year.js'
import { readBaseline } from './baseline.js'
import { abBench } from './ab-bench.js'
import { fairShares, type FairSharesResult } from './fair-shares.js'
import { slowReaders, type SlowReadersResult } from './slow-readers.js'
import { longHistory, type LongHistoryResult } from './long-history.js'
import { lockHeld, type LockHeldResult } from './lock-held.js'
import { runLoad, unexpectedStatuses, type LoadResult } from './load.js'
import { machine } from './machine.js'
import { readMemory, type MemoryBreakdown } from './memory.js'
import { RESULTS_DIR } from './paths.js'
import { startBareServer, stopChildrenOnSignals, type RunningServer } from './processes.js'
import { profileScenario } from './profiling.js'
import { scenarios, type Scenario } from './scenarios.js'
import { prepareBench, scenarioContext, type Bench } from './setup.js'
import { summarise } from './summary.js'
import { renderReport } from './table.js'
import { judgeTargets, largestIncrease, type Verdict } from './targets.js'
import type { WriteCheck } from './update-trace.js'
import { perRequest, scenariosToProfile, type Evidence } from './why.js'

/** `npm run bench` (issue 5): every scenario against the service and the bare route, then one report. */

const ROUNDS = positiveInteger('BENCH_ROUNDS', process.env.BENCH_BASELINE === undefined || process.env.BENCH_BASELINE.endsWith('.md') ? 3 : 6)
const ROUND_SECONDS = positiveInteger('BENCH_SECONDS', 6)
const WARMUP_SECONDS = 2
const FULL_YEAR_RUNS = 3
/**
 * BENCH_ONLY=id,id runs those scenarios alone, a quick check of one: no full-year callbacks runs
 * (the full-year audits only when audit-1d is named), and the
 * report goes to standard output only, leaving bench/results/latest.md as the last full run wrote it.
 */
const ONLY = process.env.BENCH_ONLY?.split(',').filter((id) => id !== '')
/** Measurements on services and stores of their own (issues 28 and 29), which BENCH_ONLY may also name. */
const MEASUREMENTS = ['slow-readers', 'fair-shares', 'long-history', 'lock-held']
const measures = (id: string) => ONLY === undefined || ONLY.includes(id)
/**
 * A full run writes latest.md, and nothing else of the repository, after profiling each scenario
 * behind a missed target. BENCH_WRITE=1 does the same on a partial run: a short check of that part.
 */
const WRITE = ONLY === undefined || process.env.BENCH_WRITE === '1'
const PROFILE_SECONDS = positiveInteger('BENCH_PROFILE_SECONDS', 6)
/**
 * BENCH_BASELINE names a build to run beside this one, a fresh process of each per round (a commit
 * or a built worktree: ab-bench.ts), or a report of the same bench at another commit (its
 * latest.md, a file ending in .md) whose figures this run's are set beside.
 */
const BASELINE_NAME = process.env.BENCH_BASELINE ?? ''
const BASELINE = BASELINE_NAME.endsWith('.md') ? readBaseline(BASELINE_NAME) : undefined
const AB = BASELINE_NAME !== '' && BASELINE === undefined
/** CPU seconds each A/B measurement should take: the 10 ms ticks of /proc stay under 1% of it. */
const AB_CPU_SECONDS = positiveInteger('BENCH_AB_CPU_SECONDS', 2)

function positiveInteger(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback)
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${name} must be a positive integer`)
  return value
}

async function main(): Promise<void> {
  stopChildrenOnSignals()
  const bench = await prepareBench()
  let service: RunningServer | undefined
  let bare: RunningServer | undefined
  let workers: RunningServer | undefined
  const results = new Map<string, LoadResult[]>()
  const writes: WriteCheck[] = []
  const singleConnection = new Map<string, LoadResult>()
  const memory = new Map<string, MemoryBreakdown>()
  // Other work on the machine (a test suite, say) slows every scenario: the report shows how much there was.
  const cpuOfOthers = startCpuAccounting()
  const fullYear: FullYearResult[] = []
  const fullYearAudit: FullYearResult[] = []
  let slowReadersResult: SlowReadersResult | undefined
  let fairSharesResult: FairSharesResult | undefined
  let longHistoryResult: LongHistoryResult | undefined
  let lockHeldResult: LockHeldResult | undefined
  let list: Scenario[]
  try {
    service = await bench.startService()
    const context = await scenarioContext(bench, service)
    list = scenarios(context).filter((scenario) => ONLY === undefined || ONLY.includes(scenario.id))
    const unknown = ONLY?.filter((id) => !list.some((scenario) => scenario.id === id) && !MEASUREMENTS.includes(id)) ?? []
    if (unknown.length > 0) throw new Error(`BENCH_ONLY names no scenario ${unknown.join(', ')}`)
    const uses = (server: Scenario['server']) => list.some((scenario) => scenario.server === server)
    if (uses('bare')) bare = await startBareServer()
    if (uses('workers')) workers = await bench.startService([], 2)
    const servers = { service, bare, workers }

    // A round sends a fixed number of requests, set from the warm-up's rate: the service's CPU
    // time is divided by a count that does not move with the machine's speed in that round.
    const amounts = new Map<string, number>()
    const runOnce = async (scenario: Scenario, seconds: number, readMemoryAfter = false, amount?: number) => {
      const server = servers[scenario.server]!
      const { requests, check } = scenario.prepare()
      const result = await runLoad({
        url: server.url,
        pid: server.pid,
        connections: scenario.connections,
        seconds,
        ...(amount === undefined ? {} : { amount }),
        requests
      })
      // Only the service has /metrics; with workers, it would be one process's of several.
      if (readMemoryAfter && scenario.server === 'service') memory.set(scenario.id, await readMemory(server.url, context.token))
      const written = check === undefined ? undefined : await check()
      // Let the closed connections drain before the next scenario starts.
      await sleep(300)
      return { result, written }
    }

    // Warm-up: JIT, SQLite and OS page caches; also a first check that every scenario gets the status it expects.
    for (const scenario of list) {
      const { result } = await runOnce(scenario, WARMUP_SECONDS)
      amounts.set(scenario.id, Math.max(scenario.connections, Math.round(result.rps * ROUND_SECONDS)))
      const wrong = unexpectedStatuses(result.statusCounts, scenario.expectedStatus)
      const note = wrong > 0 || result.transportErrors > 0 ? ` — statuses ${JSON.stringify(result.statusCounts)}, transport errors ${result.transportErrors}` : ''
      log(`warm-up ${scenario.id}: ${Math.round(result.rps)} req/s${note}`)
    }
    // Interleaved rounds: a slow spell of the machine hits every scenario alike, and the bare route
    // runs right before verify in each round, so their ratio compares like with like. Memory is read
    // in the last round only: a scrape of /metrics may also run the 7-day audit behind its gauges
    // (once a minute at most), and what that leaves in the heap should reach as few rounds as can be.
    for (let round = 1; round <= ROUNDS; round++) {
      for (const scenario of list) {
        const { result, written } = await runOnce(scenario, ROUND_SECONDS, round === ROUNDS, amounts.get(scenario.id))
        results.set(scenario.id, [...(results.get(scenario.id) ?? []), result])
        if (written !== undefined) writes.push(written)
        const lost = written === undefined ? '' : `, ${written.lost} lost of ${written.acknowledged}`
        log(
          `round ${round}/${ROUNDS} ${scenario.id}: ${Math.round(result.rps)} req/s, ${result.serverCpuUsPerRequest.toFixed(1)} µs CPU a request, p50 ${result.p50.toFixed(2)} ms, ` +
            `p99 ${result.p99.toFixed(2)} ms, RSS ${result.peakRssMb.toFixed(0)} MB${lost}`
        )
      }
    }
    // Latency without queueing: one connection, so p99 is the service time of one request, not the wait behind others.
    for (const scenario of list.filter((candidate) => candidate.probeSingleConnection === true)) {
      const { result } = await runOnce({ ...scenario, connections: 1 }, Math.max(2, Math.ceil(ROUND_SECONDS / 2)))
      singleConnection.set(scenario.id, result)
      log(`one connection ${scenario.id}: p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms`)
    }
    await service.stop()
    await bare?.stop()
    await workers?.stop()
    // Three times, each on a fresh process: when V8 collects decides the peak, and it varies run to run.
    for (let run = 1; run <= (ONLY === undefined ? FULL_YEAR_RUNS : 0); run++) {
      fullYear.push(await fullYearRss(() => bench.startService(), context.token, bench.store.newest))
      log(`full-year baseband-callbacks ${run}/${FULL_YEAR_RUNS}: RSS +${fullYear.at(-1)!.increaseMb.toFixed(1)} MB`)
    }
    for (let run = 1; run <= (ONLY === undefined || ONLY.includes('audit-1d') ? FULL_YEAR_RUNS : 0); run++) {
      fullYearAudit.push(await fullYearRss(() => bench.startService(), context.token, bench.store.newest, 'audit'))
      const last = fullYearAudit.at(-1)!
      log(`full-year audit ${run}/${FULL_YEAR_RUNS}: ${last.seconds.toFixed(2)} s, RSS +${last.increaseMb.toFixed(1)} MB`)
    }
    if (measures('slow-readers')) {
      slowReadersResult = await slowReaders()
      log(`slow readers: RSS +${slowReadersResult.growthMb.toFixed(1)} MB while ${slowReadersResult.streaming} stalled clients held their slots`)
    }
    if (measures('fair-shares')) {
      fairSharesResult = await fairShares()
      const rounds = fairSharesResult.rounds.map(({ alone, withStreams }) => `${Math.round(withStreams)} of ${Math.round(alone)}/s`).join(', ')
      log(`fair shares: update-trace beside 1,000 streams ${rounds}; median ${(fairSharesResult.ratio * 100).toFixed(0)}%`)
    }
    if (measures('long-history')) {
      longHistoryResult = await longHistory()
      const { healthP95Ms, partsBeside, parts, partMaxMs } = longHistoryResult
      log(`history of a 1,000,000-transition event: /health p95 ${healthP95Ms.toFixed(1)} ms beside ten readers (${partsBeside} parts); a walk alone, ${parts} parts, the slowest ${partMaxMs.toFixed(1)} ms`)
    }
    if (measures('lock-held')) {
      lockHeldResult = await lockHeld()
      const { healthMaxMs, readMaxMs, healthAnswers, writesRefused } = lockHeldResult
      log(`write lock held 12 s by another process: ${healthAnswers} /health, the slowest ${healthMaxMs.toFixed(1)} ms; reads the slowest ${readMaxMs.toFixed(1)} ms; ${writesRefused} writes answered 503`)
    }
  } finally {
    await service?.stop()
    await bare?.stop()
    await workers?.stop()
  }

  const bareRounds = results.get('bare')
  // Only the token checks are compared with the bare route: it answers what they answer.
  const summaries = list.map((scenario) =>
    summarise(scenario, results.get(scenario.id)!, scenario.id.startsWith('verify') ? bareRounds : undefined, scenario.id === 'update-trace' ? writes : [])
  )
  const moved = {
    ...(slowReadersResult === undefined ? {} : { slowReaders: slowReadersResult }),
    ...(fairSharesResult === undefined ? {} : { fairShares: fairSharesResult }),
    ...(longHistoryResult === undefined ? {} : { longHistory: longHistoryResult }),
    ...(lockHeldResult === undefined ? {} : { lockHeld: lockHeldResult })
  }
  const verdicts = judgeTargets({ summaries, fullYear, fullYearAudit, store: bench.store, ...moved, ...(BASELINE === undefined ? {} : { baseline: BASELINE }) })
  const evidence: Evidence = {
    profiles: WRITE ? await profileMisses(bench, verdicts) : new Map<string, CpuCost>(),
    ...(WRITE ? {} : { noProfiles: 'a partial run profiles only with BENCH_WRITE=1' }),
    memory,
    ...(fullYear.length === 0 ? {} : { fullYearMemory: largestIncrease(fullYear)!.memory })
  }

  const cpu = cpuOfOthers()
  if (cpu.othersPercent > NOISY_PERCENT) log(`other processes used ${cpu.othersPercent.toFixed(0)}% of the CPU during the run: numbers are lower and noisier`)
  const input = {
    date: new Date(),
    machine: machine(),
    store: bench.store,
    rounds: ROUNDS,
    roundSeconds: ROUND_SECONDS,
    summaries,
    singleConnection,
    cpuOfOthers: cpu,
    fullYear,
    fullYearAudit,
    ...moved,
    ...(BASELINE === undefined ? {} : { baseline: BASELINE }),
    ...(ONLY === undefined ? {} : { only: ONLY })
  }
  const report = renderReport(input, verdicts, evidence)
  if (WRITE) {
    mkdirSync(RESULTS_DIR, { recursive: true })
    writeFileSync(join(RESULTS_DIR, 'latest.md'), report)
  }
  process.stdout.write(report)
  if (WRITE) log('wrote bench/results/latest.md')
}

/**
 * Profiles, each alone on a service of its own, the scenarios behind missed latency and rate
 * targets. One that fails is logged and left out: the report says it was not profiled.
 */
async function profileMisses(bench: Bench, verdicts: Verdict[]) {
  const profiles = new Map<string, CpuCost>()
  for (const id of scenariosToProfile(verdicts)) {
    try {
      const cost = cpuCost(await profileScenario(bench, id, PROFILE_SECONDS))
      profiles.set(id, cost)
      log(`profile ${id}: ${perRequest(cost.msPerRequest)} ms of CPU a request over ${cost.requests} requests`)
    } catch (error) {
      log(`profile ${id} failed: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
  return profiles
}

const log = (line: string) => void process.stderr.write(`bench: ${line}\n`)

async function ab(): Promise<void> {
  const report = await abBench({
    baseline: BASELINE_NAME,
    rounds: ROUNDS,
    cpuSeconds: AB_CPU_SECONDS,
    write: WRITE,
    profileSeconds: PROFILE_SECONDS,
    log,
    ...(ONLY === undefined ? {} : { only: ONLY })
  })
  process.stdout.write(report)
}

await (AB ? ab() : main()).catch((error: unknown) => {
  process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  process.exitCode = 1
})
