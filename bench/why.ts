import type { Share } from './cpuprofile.js'
import type { CpuCost } from './cpu-cost.js'
import { grouped, mb } from './figures.js'
import { describeMemory, type MemoryBreakdown } from './memory.js'
import type { Verdict } from './targets.js'

/** What the run found behind its misses. */
export interface Evidence {
  /** CPU profiles of the scenarios behind missed latency and rate targets, by scenario id. */
  profiles: Map<string, CpuCost>
  /** Why a CPU miss has no profile, when none were taken (a partial run that writes nothing). */
  noProfiles?: string
  /** The service's memory right after each scenario's last round, by scenario id. */
  memory: Map<string, MemoryBreakdown>
  /** The fresh process's memory right after the judged full-year request. */
  fullYearMemory?: MemoryBreakdown
}

/** The scenario whose CPU profile explains a missed verdict; undefined where time is not the question. */
export function cpuScenarioOf(verdict: Verdict): string | undefined {
  switch (verdict.target) {
    // Verify's ratio to the bare route is lost in verify's own work: the bare route is the ceiling.
    case 'verifyToBare':
      return 'verify'
    case 'eventStatusP99Ms':
    case 'callbacksDayP99Ms':
    case 'eventsP99Ms':
    case 'auditDayP99Ms':
    case 'updateTracePerSecond':
      return verdict.scenario
    default:
      return undefined
  }
}

/** The scenarios to profile: one profile each, however many of their verdicts missed. */
export function scenariosToProfile(verdicts: Verdict[]): string[] {
  return [...new Set(verdicts.filter((verdict) => !verdict.met).flatMap((verdict) => cpuScenarioOf(verdict) ?? []))]
}

export const perRequest = (value: number) => (value >= 100 ? value.toFixed(0) : value.toPrecision(3))
const share = (item: Share) => `${item.percent.toFixed(1)}%`
const stated = (verdict: Verdict) => `${verdict.what}: ${verdict.figure}${verdict.unit} (target ${verdict.goal})`

const SLOW_READERS_WHY =
  'Not profiled: the peak is garbage the collector had not taken yet when it was sampled, which other work on the machine moves; what the stalled clients hold is bounded by test/process/slow-clients.test.ts.'
const FAIR_SHARES_WHY =
  "Not profiled: a ratio of two loads on cores shared with the streams' reader process and autocannon; `node dist/bench/profile.js update-trace` shows what a write costs."
const LONG_HISTORY_WHY =
  'Not profiled: each part is a bounded read (test/tracer/long-history.ts counts it); `node dist/bench/profile.js` of a history scenario, or the service’s log of slow requests, shows where the time went.'

const LOCK_HELD_WHY =
  'Not profiled: no lock is waited for on the event loop (test/process/lock-holder.test.ts counts what is answered while a write waits); the slowest answer is the one a busy machine descheduled.'

/** The section of latest.md: one entry per missed target. */
export function whySection(verdicts: Verdict[], evidence: Evidence): string[] {
  const missed = verdicts.filter((verdict) => !verdict.met)
  const lines = ['## Why each missed target is missed', '']
  if (missed.length === 0) return [...lines, 'No target was missed.', '']
  for (const verdict of missed.filter((candidate) => candidate.target !== 'peakRssMb')) lines.push(...entry(verdict, evidence))
  const memory = missed.filter((verdict) => verdict.target === 'peakRssMb')
  if (memory.length > 0) lines.push(...memoryEntries(memory, evidence))
  return [...lines, '']
}

function entry(verdict: Verdict, evidence: Evidence): string[] {
  const head = `- **${stated(verdict)}.**`
  const scenario = cpuScenarioOf(verdict)
  if (scenario !== undefined) {
    const cost = evidence.profiles.get(scenario)
    if (cost === undefined) return [`${head} Not profiled: ${evidence.noProfiles ?? 'the profile failed (the bench’s standard error says why)'} (\`node dist/bench/profile.js ${scenario}\`).`]
    return [
      `${head} \`${scenario}\` alone for ${cost.seconds.toFixed(0)} s on a service started with --cpu-prof (\`${cost.file}\`): ` +
        `${grouped(cost.requests)} requests, ${perRequest(cost.msPerRequest)} ms of CPU each ` +
        `(${grouped(cost.busyMs)} ms busy while the load ran).`,
      `  - Self time by package: ${cost.byPackage.map((item) => `${item.name} ${share(item)}`).join(', ')}`,
      '  - Self time by function:',
      ...cost.byFunction.map((item) => `    - ${share(item)} \`${item.name}\``)
    ]
  }
  if (verdict.target === 'fullYearRssIncreaseMb') {
    const memory = evidence.fullYearMemory
    return [`${head} ${memory === undefined ? 'No memory reading.' : `The fresh process right after the request: ${describeMemory(memory)}.`}`]
  }
  if (verdict.target === 'lostUpdates') {
    return [`${head} Not a cost a profile explains: acknowledged writes missing from the SQLite file are a durability fault.`]
  }
  if (verdict.target === 'slowReadersRssGrowthMb') return [`${head} ${SLOW_READERS_WHY}`]
  if (verdict.target === 'writesBesideStreams') return [`${head} ${FAIR_SHARES_WHY}`]
  if (verdict.target === 'longHistoryHealthP95Ms' || verdict.target === 'longHistoryPartMs') return [`${head} ${LONG_HISTORY_WHY}`]
  if (verdict.target === 'lockHeldHealthMs' || verdict.target === 'lockHeldReadMs') return [`${head} ${LOCK_HELD_WHY}`]
  return [`${head} Seeding is the \`tracer seed\` command's work when the store is made, not the service's: the bench does not profile it.`]
}

/** Peak-RSS misses: a CPU profile does not explain memory, the service's own /metrics does. */
function memoryEntries(missed: Verdict[], evidence: Evidence): string[] {
  const row = (verdict: Verdict) => {
    const memory = evidence.memory.get(verdict.scenario ?? '')
    const cells =
      memory === undefined
        ? ['–', '–', '–', '–']
        : [mb(memory.rssMb), `${mb(memory.heapTotalMb)} (${mb(memory.heapUsedMb)})`, mb(memory.externalMb), mb(memory.restMb)]
    return `  | ${verdict.scenario} | ${verdict.figure} | ${cells.join(' | ')} |`
  }
  return [
    `- **Peak RSS at or above the target (< 150 MB) in ${missed.length} scenario${missed.length === 1 ? '' : 's'}.** ` +
      "Where the memory is, from the service's /metrics right after the scenario's last round (the peak is the highest " +
      'RSS sampled in any round, so the reading is usually a little lower); a dash where the server has no /metrics.',
    '',
    '  | Scenario | Peak RSS MB | RSS then MB | V8 heap MB (used) | External MB | Rest MB (code, stacks, C allocator) |',
    '  | --- | ---: | ---: | ---: | ---: | ---: |',
    ...missed.map(row)
  ]
}

/** One line for the report's glance: the CPU a request and the top 3 packages and functions, or the memory breakdown. */
export function shortWhy(verdict: Verdict, evidence: Evidence): string {
  const what = verdict.target === 'peakRssMb' ? 'peak RSS' : verdict.what
  const head = `- ${what} ${verdict.figure}${verdict.unit}${verdict.target === 'peakRssMb' ? ` (${verdict.scenario})` : ''}:`
  const scenario = cpuScenarioOf(verdict)
  if (scenario !== undefined) {
    const cost = evidence.profiles.get(scenario)
    if (cost === undefined) return `${head} not profiled (\`node dist/bench/profile.js ${scenario}\`).`
    const top = (shares: Share[]) =>
      shares
        .slice(0, 3)
        .map((item) => `${item.name} ${item.percent.toFixed(0)}%`)
        .join(', ')
    return `${head} ${perRequest(cost.msPerRequest)} ms of CPU a request; self time in ${top(cost.byPackage)}; top functions ${top(cost.byFunction)}.`
  }
  if (verdict.target === 'peakRssMb' || verdict.target === 'fullYearRssIncreaseMb') {
    const [memory, when] =
      verdict.target === 'peakRssMb'
        ? [evidence.memory.get(verdict.scenario ?? ''), 'right after its last round']
        : [evidence.fullYearMemory, 'right after the request']
    return memory === undefined ? `${head} no memory reading.` : `${head} ${when}, ${describeMemory(memory)}.`
  }
  if (verdict.target === 'lostUpdates') return `${head} a durability fault, not a cost.`
  if (verdict.target === 'slowReadersRssGrowthMb') return `${head} ${SLOW_READERS_WHY}`
  if (verdict.target === 'writesBesideStreams') return `${head} ${FAIR_SHARES_WHY}`
  if (verdict.target === 'longHistoryHealthP95Ms' || verdict.target === 'longHistoryPartMs') return `${head} ${LONG_HISTORY_WHY}`
  if (verdict.target === 'lockHeldHealthMs' || verdict.target === 'lockHeldReadMs') return `${head} ${LOCK_HELD_WHY}`
  return `${head} the \`tracer seed\` command's time, not profiled by the bench.`
}
