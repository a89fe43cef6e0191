import { execFileSync } from 'node:child_process'
import { availableParallelism } from 'node:os'
import { setTimeout as sleep } from 'node:timers/promises'
import { cpuCost } from './cpu-cost.js'
import { startCpuAccounting } from './cpu-share.js'
import type { Build } from './builds.js'
import { runLoad, unexpectedStatuses } from './load.js'
import type { RunningServer } from './processes.js'
import type { Scenario } from './scenarios.js'

/**
 * The processes of an A/B run (issue 31): each round starts a fresh service of each build, the
 * baseline first in odd rounds and this build first in even ones, and measures every scenario in
 * it as the CPU time of the service's processes over a fixed number of requests. A fresh process
 * per build and round is the point: one process's rounds agree far better than two processes of
 * the same build do, so only rounds of fresh processes say how much two builds differ.
 */

export interface AbOptions {
  rounds: number
  /** Scenario ids to run; unset: every one both builds have that runs on one process (not the workers one). */
  only?: string[]
  /** CPU seconds one measurement should take: 10 ms ticks stay under 1% of it. */
  cpuSeconds: number
  log: (line: string) => void
}

/** One scenario in one fresh process of one build. */
export interface Measurement {
  usPerRequest: number
  responses: number
  rps: number
  p50: number
  p99: number
  unexpected: number
  transportErrors: number
  lost?: number
}

export type Side = 'baseline' | 'current'

export interface Slot {
  round: number
  build: Side
  /** Percent of the machine's CPU other processes used while this slot ran. */
  othersPercent: number
  figures: Map<string, Measurement>
}

export interface AbRun {
  /**
   * Requests a measurement, by build and scenario: set from each build's first warm-up of it and kept
   * for every round, so a build ten times cheaper is not measured over a tenth of the CPU ticks.
   */
  amounts: Record<Side, Map<string, number>>
  slots: Slot[]
  pinned: boolean
  othersPercent: number
  benches: { baseline: Bench; current: Bench }
}

/** The ceiling keeps a round short; the floor, in requests a connection, keeps a slow scenario (scrypt logins) measured. */
const MAX_REQUESTS = 60_000
const MIN_REQUESTS_A_CONNECTION = 5
/** The service on one core, the bench (autocannon) on the other, when the machine has two and taskset is here. */
const SERVICE_CORE = 1
const LOAD_CORE = 0

const canPin = (() => {
  try {
    execFileSync('taskset', ['-V'], { stdio: 'ignore' })
    return availableParallelism() >= 2
  } catch {
    return false
  }
})()

/** Every thread of `pid` onto `core`; threads and workers it makes later inherit it. */
function pin(pid: number, core: number): void {
  if (canPin) execFileSync('taskset', ['-a', '-cp', String(core), String(pid)], { stdio: 'ignore' })
}

export async function runAb(builds: { baseline: Build; current: Build }, options: AbOptions): Promise<AbRun> {
  for (const build of Object.values(builds)) build.processes.stopChildrenOnSignals()
  pin(process.pid, LOAD_CORE)
  const benches = { baseline: await builds.baseline.setup.prepareBench(), current: await builds.current.setup.prepareBench() }
  const amounts = { baseline: new Map<string, number>(), current: new Map<string, number>() }
  const slots: Slot[] = []
  const overall = startCpuAccounting()
  for (let round = 1; round <= options.rounds; round++) {
    const order = round % 2 === 1 ? (['baseline', 'current'] as const) : (['current', 'baseline'] as const)
    for (const side of order) {
      const accounting = startCpuAccounting()
      const figures = await measureSlot(builds[side], benches[side], amounts[side], options)
      const othersPercent = accounting().othersPercent
      slots.push({ round, build: side, othersPercent, figures })
      const verify = figures.get('verify')
      options.log(
        `round ${round}/${options.rounds} ${side} (${builds[side].commit.slice(0, 7)}): ${figures.size} scenarios` +
          (verify === undefined ? '' : `, verify ${verify.usPerRequest.toFixed(1)} µs a request`) +
          `, others ${othersPercent.toFixed(0)}%`
      )
    }
  }
  return { amounts, slots, pinned: canPin, othersPercent: overall().othersPercent, benches }
}

/**
 * CPU profiles of `id` on each build (its own profiler, a service of its own started with
 * --cpu-prof), summarised alike: where a grown cost went.
 */
export async function profileBoth(builds: { baseline: Build; current: Build }, run: AbRun, id: string, seconds: number) {
  return {
    baseline: cpuCost(await builds.baseline.profiling.profileScenario(run.benches.baseline, id, seconds)),
    current: cpuCost(await builds.current.profiling.profileScenario(run.benches.current, id, seconds))
  }
}

type Bench = Awaited<ReturnType<Build['setup']['prepareBench']>>

/** A fresh service (and bare route) of one build, every chosen scenario measured in it, then stopped. */
async function measureSlot(build: Build, bench: Bench, amounts: Map<string, number>, options: AbOptions): Promise<Map<string, Measurement>> {
  const figures = new Map<string, Measurement>()
  let service: RunningServer | undefined
  let bare: RunningServer | undefined
  try {
    service = await bench.startService()
    pin(service.pid, SERVICE_CORE)
    const context = await build.setup.scenarioContext(bench, service)
    const list = build.scenarios
      .scenarios(context)
      .filter((scenario) => (options.only === undefined ? scenario.server !== 'workers' : options.only.includes(scenario.id)))
    if (list.some((scenario) => scenario.server === 'workers')) throw new Error('the A/B run measures one process: leave verify-2-workers out')
    if (list.some((scenario) => scenario.server === 'bare')) {
      bare = await build.processes.startBareServer()
      pin(bare.pid, SERVICE_CORE)
    }
    for (const scenario of list) {
      const server = scenario.server === 'bare' ? bare! : service
      figures.set(scenario.id, await measure(scenario, server, amounts, options))
    }
  } finally {
    await service?.stop()
    await bare?.stop()
  }
  return figures
}

/**
 * A warm-up, then the fixed number of requests. The first warm-up of a scenario runs 2 s and sets
 * that number from the CPU a request took, so a measurement takes about `cpuSeconds` of CPU on
 * either build; later ones send a quarter of it.
 */
async function measure(scenario: Scenario, server: RunningServer, amounts: Map<string, number>, options: AbOptions): Promise<Measurement> {
  const load = async (amount: number | undefined) => {
    const { requests, check } = scenario.prepare()
    const result = await runLoad({
      url: server.url,
      pid: server.pid,
      connections: scenario.connections,
      seconds: 2,
      ...(amount === undefined ? {} : { amount }),
      requests
    })
    const written = check === undefined ? undefined : await check()
    // Let the closed connections drain before the next load starts.
    await sleep(300)
    return { result, written }
  }
  const floor = MIN_REQUESTS_A_CONNECTION * scenario.connections
  const planned = amounts.get(scenario.id)
  const warmUp = await load(planned === undefined ? undefined : Math.max(floor, Math.ceil(planned / 4)))
  if (planned === undefined) {
    const perRequest = warmUp.result.serverCpuUsPerRequest / 1e6
    const wanted = Math.min(MAX_REQUESTS, options.cpuSeconds / perRequest)
    // Round numbers where there are many; a scenario near the floor keeps its count.
    const amount = Math.max(floor, wanted > 1000 ? Math.round(wanted / 100) * 100 : Math.ceil(wanted))
    amounts.set(scenario.id, amount)
    options.log(`${scenario.id}: ${amount.toLocaleString('en-US')} requests a measurement`)
  }
  const { result, written } = await load(amounts.get(scenario.id))
  return {
    usPerRequest: result.serverCpuUsPerRequest,
    responses: result.responses,
    rps: result.rps,
    p50: result.p50,
    p99: result.p99,
    unexpected: unexpectedStatuses(result.statusCounts, scenario.expectedStatus),
    transportErrors: result.transportErrors + result.timeouts,
    ...(written === undefined ? {} : { lost: written.lost })
  }
}
