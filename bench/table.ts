import type { CpuShare } from './cpu-share.js'
import type { FullYearResult } from './full-year.js'
import type { LoadResult } from './load.js'
import type { SeededStore } from './seeded-store.js'
import type { ScenarioSummary } from './summary.js'

/** The targets of issues 5 and 13 (13 raised verify's and lowered the memory's, and added the audit's). */
export const TARGETS = {
  verifyToBare: 0.75,
  eventStatusP99Ms: 10,
  callbacksDayP99Ms: 20,
  eventsP99Ms: 15,
  auditDayP99Ms: 25,
  updateTracePerSecond: 5000,
  peakRssMb: 150,
  fullYearRssIncreaseMb: 50,
  seedSeconds: 60
} as const

export interface Verdict {
  what: string
  met: boolean
}

export interface ReportInput {
  date: Date
  machine: string[]
  store: SeededStore
  rounds: number
  roundSeconds: number
  summaries: ScenarioSummary[]
  /** The latency-target scenarios again with one connection (no queueing). */
  singleConnection: Map<string, LoadResult>
  /** CPU used by other processes during the run: the noise the numbers carry. */
  cpuOfOthers: CpuShare
  /** One result per fresh process; the largest increase is judged. None in a partial run. */
  fullYear: FullYearResult[]
  /** The scenarios of a partial run (BENCH_ONLY); unset when every scenario ran. */
  only?: string[]
}

const mark = (met: boolean) => (met ? '✓ met' : '✗ missed')
const grouped = (n: number) => Math.round(n).toLocaleString('en-US')
const ms = (n: number) => (Number.isNaN(n) ? '–' : n < 10 ? n.toFixed(2) : n.toFixed(1))
const mb = (n: number) => n.toFixed(0)

/** The whole Markdown report: facts, the table with each target beside its value, and the verdicts. */
export function renderReport(input: ReportInput): string {
  const verdicts: Verdict[] = []
  const judge = (what: string, met: boolean, value: string, target: string) => {
    verdicts.push({ what: `${what}: ${value} (target ${target})`, met })
    return `${value} ${mark(met)} (${target})`
  }

  const rows = input.summaries.map((summary) => {
    const { id } = summary.scenario
    const { median } = summary
    let rps = grouped(median.rps)
    let p99 = ms(median.p99)
    let vsBare = '–'
    if (id === 'verify') {
      vsBare = judge('/auth/verify vs bare route', (summary.ratioToBare ?? 0) >= TARGETS.verifyToBare, pct(summary.ratioToBare), '≥ 75%')
    } else if (summary.ratioToBare !== undefined && id !== 'bare') {
      vsBare = pct(summary.ratioToBare)
    }
    if (id === 'event-status') p99 = judge('event-status p99', median.p99 < TARGETS.eventStatusP99Ms, ms(median.p99), '< 10 ms')
    if (id === 'callbacks-1d') p99 = judge('baseband-callbacks 1 day p99', median.p99 < TARGETS.callbacksDayP99Ms, ms(median.p99), '< 20 ms')
    if (id === 'audit-1d') p99 = judge('audit 1 day p99', median.p99 < TARGETS.auditDayP99Ms, ms(median.p99), '< 25 ms')
    if (id === 'events-page1' || id === 'events-page500') {
      p99 = judge(`/v1/events ${id.slice(7)} p99`, median.p99 < TARGETS.eventsP99Ms, ms(median.p99), '< 15 ms')
    }
    if (id === 'update-trace') {
      rps = judge('update-trace rate', median.rps >= TARGETS.updateTracePerSecond, grouped(median.rps), '≥ 5,000/s')
    }
    // The target is one process's; with workers the column adds up the primary's and theirs.
    const rss =
      summary.scenario.server === 'workers'
        ? `${mb(summary.peakRssMb)}²`
        : judge(`${id} peak RSS`, summary.peakRssMb < TARGETS.peakRssMb, mb(summary.peakRssMb), '< 150')
    const cpu = `${median.serverCores.toFixed(2)} / ${median.loadGeneratorCores.toFixed(2)}`
    const errors = summary.scenario.expectedStatus === 200 ? String(summary.unexpectedStatuses) : `${summary.unexpectedStatuses}¹`
    const transport = summary.timeouts > 0 ? `${summary.transportErrors} + ${summary.timeouts} timeouts` : String(summary.transportErrors)
    return [summary.scenario.title, summary.scenario.connections, rps, ms(median.p50), p99, errors, transport, rss, cpu, vsBare]
  })

  const writes = input.summaries.find((summary) => summary.writes !== undefined)?.writes
  const lines = [
    `# frb-tracer bench — ${input.date.toISOString()}`,
    '',
    ...input.machine.map((fact) => `- ${fact}`),
    `- Store: ${input.store.spec.events.toLocaleString('en-US')} events over ${input.store.spec.days} days (seed ${input.store.spec.seed}), ` +
      `${input.store.reused ? `reused (seeded ${input.store.seededAt})` : 'seeded by this run'}; ` +
      `events from ${new Date(input.store.oldest).toISOString()} to ${new Date(input.store.newest).toISOString()}`,
    `- Method: ${input.rounds} interleaved rounds of ${input.roundSeconds} s per scenario after a warm-up; req/s, p50 and p99 from the ` +
      'median round by req/s; errors summed and RSS the highest over all rounds. Service: `tracer serve`, NODE_ENV=production, ' +
      'LOG_LEVEL=info (the default; the bare route logs at warn), AUTH_RATE_LIMIT raised to 1,000,000 so the login scenario measures scrypt, not the limiter. ' +
      'autocannon runs in the bench process on the same 2 cores: the CPU column gives the cores the service used on average ' +
      '(all its processes) and those the bench process used driving the load; the two cannot add up to more than the machine has, ' +
      'so with two workers the service gets what autocannon leaves, and its figure shows what a second process buys on this ' +
      'machine with its load generator on it, not how the service scales on free cores.',
    `- Other processes used ${input.cpuOfOthers.othersPercent.toFixed(0)}% of the machine's CPU during the run ` +
      `(hypervisor steal ${input.cpuOfOthers.stealPercent.toFixed(1)}%); above a few percent, every number here is lower and noisier than on a quiet machine.`,
    ...(input.only === undefined ? [] : [`- Partial run: ${input.only.join(', ')} alone (BENCH_ONLY); no full-year runs.`]),
    '',
    '| Scenario | Conns | req/s | p50 ms | p99 ms | Non-2xx | Transport errors | Peak RSS MB | CPU cores: service / load generator | vs bare |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map((cells) => `| ${cells.join(' | ')} |`),
    '',
    '¹ responses other than the expected 401.',
    '² the primary and its workers together; the 150 MB target is one process’s.',
    ''
  ]
  if (writes !== undefined) {
    const line = judge(
      'update-trace lost updates',
      writes.lost === 0,
      `${writes.lost} lost of ${writes.acknowledged.toLocaleString('en-US')} acknowledged`,
      '0 lost'
    )
    lines.push(`- update-trace, every acknowledged (event, key) read back from the SQLite file: ${line}`)
  }
  const years = input.fullYear
  const worst = years.reduce<FullYearResult | undefined>((a, b) => (a === undefined || b.increaseMb > a.increaseMb ? b : a), undefined)
  if (worst !== undefined) {
    lines.push(
      `- One baseband-callbacks request over the newest 365 days (${worst.rows.toLocaleString('en-US')} rows, ` +
        `${worst.megabytes.toFixed(1)} MB in ${worst.seconds.toFixed(1)} s), ${years.length} times on a fresh process each: RSS increase ` +
        `${years.map((year) => `${mb(year.baselineMb)} → ${mb(year.peakMb)}`).join(', ')} MB; the largest, ` +
        judge('full-year baseband-callbacks RSS increase (largest of the runs)', worst.increaseMb < TARGETS.fullYearRssIncreaseMb, `${worst.increaseMb.toFixed(1)} MB`, '< 50 MB')
    )
  }
  const seed = input.store.seedSeconds
  lines.push(
    `- Seeding ${input.store.spec.events.toLocaleString('en-US')} events (${input.store.reused ? 'when the reused store was made' : 'this run'}): ` +
      judge('seeding', seed < TARGETS.seedSeconds, `${seed.toFixed(1)} s`, '< 60 s')
  )
  if (input.singleConnection.size > 0) {
    lines.push(
      '',
      'The same requests one at a time (one connection, no queueing): the service time behind the p99 above. ' +
        'The targets are judged on the loaded numbers in the table.',
      '',
      '| Scenario | req/s | p50 ms | p99 ms |',
      '| --- | ---: | ---: | ---: |',
      ...[...input.singleConnection].map(([id, result]) => `| ${id} | ${grouped(result.rps)} | ${ms(result.p50)} | ${ms(result.p99)} |`)
    )
  }
  lines.push('', '## Targets', '', ...verdicts.map((verdict) => `- ${mark(verdict.met)} — ${verdict.what}`), '')
  // The rounds themselves, so a reader can see how much the machine's noise moved each number.
  lines.push('## Rounds (req/s, p99 ms)', '', `| Scenario | ${input.summaries[0]!.rounds.map((_, i) => `Round ${i + 1}`).join(' | ')} |`)
  lines.push(`| --- | ${input.summaries[0]!.rounds.map(() => '---:').join(' | ')} |`)
  for (const summary of input.summaries) {
    const cells = summary.rounds.map((round) => `${grouped(round.rps)} / ${ms(round.p99)}`)
    lines.push(`| ${summary.scenario.id} | ${cells.join(' | ')} |`)
  }
  lines.push('')
  lines.push(
    'A missed target: profile the service under that scenario with `node dist/bench/profile.js <scenario-id>` ' +
      `(ids: ${input.summaries.map((summary) => summary.scenario.id).join(', ')}).`,
    ''
  )
  return lines.join('\n')
}

const pct = (ratio: number | undefined) => (ratio === undefined ? '–' : `${(ratio * 100).toFixed(0)}%`)
