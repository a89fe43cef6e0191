import type { CpuShare } from './cpu-share.js'
import { grouped, mark, mb, ms, pct } from './figures.js'
import { renderGlance } from './glance.js'
import type { FullYearResult } from './full-year.js'
import type { LoadResult } from './load.js'
import { machineFacts, type Machine } from './machine.js'
import type { SeededStore } from './seeded-store.js'
import type { BaselineRun } from './baseline.js'
import type { ScenarioSummary } from './summary.js'
import type { FairSharesResult } from './fair-shares.js'
import type { SlowReadersResult } from './slow-readers.js'
import type { LongHistoryResult } from './long-history.js'
import type { LockHeldResult } from './lock-held.js'
import { largestIncrease, p99TargetOf, TARGETS, type TargetKey, type Verdict } from './targets.js'
import { whySection, type Evidence } from './why.js'

export interface ReportInput {
  date: Date
  machine: Machine
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
  /** The same, of one audit request over the year. */
  fullYearAudit?: FullYearResult[]
  /** The same bench at another commit on this machine (BENCH_BASELINE). */
  baseline?: BaselineRun
  /** The scenarios of a partial run (BENCH_ONLY); unset when every scenario ran. */
  only?: string[]
  /** The bounds that moved here from the process tests (issue 28), when measured. */
  slowReaders?: SlowReadersResult
  fairShares?: FairSharesResult
  /** Issue 29's measurement on a store of its own, when measured. */
  longHistory?: LongHistoryResult
  /** The same issue's lock held by another process, when measured. */
  lockHeld?: LockHeldResult
}

/** The whole Markdown report: facts, the table with each target beside its value, the verdicts and why each miss is one. */
export function renderReport(input: ReportInput, verdicts: Verdict[], evidence: Evidence): string {
  const judged = (scenario: string, target: TargetKey) => {
    const verdict = verdicts.find((candidate) => candidate.scenario === scenario && candidate.target === target)
    return verdict === undefined ? undefined : `${verdict.figure} ${mark(verdict.met)} (${verdict.goal})`
  }
  const stated = (target: TargetKey) => {
    const verdict = verdicts.find((candidate) => candidate.target === target)!
    return `${verdict.figure}${verdict.unit} ${mark(verdict.met)} (${verdict.goal})`
  }

  const rows = input.summaries.map((summary) => {
    const { id } = summary.scenario
    const { median } = summary
    const rps = judged(id, 'updateTracePerSecond') ?? grouped(median.rps)
    const p99Target = p99TargetOf(id)
    const p99 = (p99Target === undefined ? undefined : judged(id, p99Target)) ?? ms(median.p99)
    const vsBare = judged(id, 'verifyToBare') ?? (summary.ratioToBare !== undefined && id !== 'bare' ? pct(summary.ratioToBare) : '–')
    // The target is one process's; with workers the column adds up the primary's and theirs.
    const rss = judged(id, 'peakRssMb') ?? `${mb(summary.peakRssMb)}²`
    const cpu = `${median.serverCores.toFixed(2)} / ${median.loadGeneratorCores.toFixed(2)}`
    const errors = summary.scenario.expectedStatus === 200 ? String(summary.unexpectedStatuses) : `${summary.unexpectedStatuses}¹`
    const transport = summary.timeouts > 0 ? `${summary.transportErrors} + ${summary.timeouts} timeouts` : String(summary.transportErrors)
    const cpuPerRequest = Number.isNaN(median.serverCpuUsPerRequest) ? '–' : median.serverCpuUsPerRequest.toFixed(median.serverCpuUsPerRequest < 100 ? 1 : 0)
    return [summary.scenario.title, summary.scenario.connections, rps, ms(median.p50), p99, cpuPerRequest, errors, transport, rss, cpu, vsBare]
  })

  const writes = input.summaries.some((summary) => summary.writes !== undefined)
  const lines = [
    `# frb-tracer bench — ${input.date.toISOString()}`,
    '',
    ...machineFacts(input.machine).map((fact) => `- ${fact}`),
    `- Store: ${input.store.spec.events.toLocaleString('en-US')} events over ${input.store.spec.days} days (seed ${input.store.spec.seed}), ` +
      `${input.store.reused ? `reused (seeded ${input.store.seededAt})` : 'seeded by this run'}; ` +
      `events from ${new Date(input.store.oldest).toISOString()} to ${new Date(input.store.newest).toISOString()}`,
    `- Method: ${input.rounds} interleaved rounds per scenario after a warm-up, each of the number of requests the warm-up's rate makes in ${input.roundSeconds} s; req/s, p50 and p99 from the ` +
      'median round by req/s; errors summed and RSS the highest over all rounds. Service: `tracer serve`, NODE_ENV=production, ' +
      'LOG_LEVEL=info (the default; the bare route logs at warn), AUTH_RATE_LIMIT raised to 1,000,000 so the login scenario measures scrypt, not the limiter, and MAX_STREAMED_RESPONSES_PER_CLIENT to 32 (the instance’s whole bound) since one user drives every connection. ' +
      'autocannon runs in the bench process on the same 2 cores: the CPU column gives the cores the service used on average ' +
      '(all its processes) and those the bench process used driving the load; the two cannot add up to more than the machine has, ' +
      'so with two workers the service gets what autocannon leaves, and its figure shows what a second process buys on this ' +
      'machine with its load generator on it, not how the service scales on free cores.',
    `- Other processes used ${input.cpuOfOthers.othersPercent.toFixed(0)}% of the machine's CPU during the run ` +
      `(hypervisor steal ${input.cpuOfOthers.stealPercent.toFixed(1)}%); above a few percent, every number here is lower and noisier than on a quiet machine.`,
    ...(input.only === undefined ? [] : [`- Partial run: ${input.only.join(', ')} alone (BENCH_ONLY); no full-year callbacks runs${input.only.includes('audit-1d') ? '' : ', nor full-year audits'}.`]),
    '',
    renderGlance(verdicts, evidence),
    '',
    '## Every scenario',
    '',
    '| Scenario | Conns | req/s | p50 ms | p99 ms | CPU µs a request³ | Non-2xx | Transport errors | Peak RSS MB | CPU cores: service / load generator | vs bare |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map((cells) => `| ${cells.join(' | ')} |`),
    '',
    '¹ responses other than the expected 401.',
    '² the primary and its workers together; the 150 MB target is one process’s.',
    '³ CPU time (user + system, from /proc) of the service’s processes over the median round’s requests: every round of a scenario sends the same number, set from its warm-up’s rate to last about a round. ' +
      'To compare two builds, run the A/B instrument (`BENCH_BASELINE=<commit or worktree>`, docs/performance.md): one process per build shares the cores with the load generator here.',
    ''
  ]
  if (writes) lines.push(`- update-trace, every acknowledged (event, key) read back from the SQLite file: ${stated('lostUpdates')}`)
  const years = input.fullYear
  const worst = largestIncrease(years)
  if (worst !== undefined) {
    lines.push(
      `- One baseband-callbacks request over the newest 365 days (${worst.rows.toLocaleString('en-US')} rows, ` +
        `${worst.megabytes.toFixed(1)} MB in ${worst.seconds.toFixed(1)} s), ${years.length} times on a fresh process each: RSS increase ` +
        `${years.map((year) => `${mb(year.baselineMb)} → ${mb(year.peakMb)}`).join(', ')} MB; the largest, ${stated('fullYearRssIncreaseMb')}`
    )
  }
  const audits = input.fullYearAudit ?? []
  if (audits.length > 0) {
    const first = audits[0]!
    lines.push(
      `- One audit request over the newest 365 days (${first.rows.toLocaleString('en-US')} events, ${first.megabytes.toFixed(1)} MB), ` +
        `${audits.length} times on a fresh process each: ${audits.map((run) => `${run.seconds.toFixed(2)} s`).join(', ')}; ` +
        `RSS increase ${audits.map((run) => `${mb(run.baselineMb)} → ${mb(run.peakMb)}`).join(', ')} MB`
    )
  }
  lines.push(
    `- Seeding ${input.store.spec.events.toLocaleString('en-US')} events (${input.store.reused ? 'when the reused store was made' : 'this run'}): ` +
      stated('seedSeconds')
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
  if (input.baseline !== undefined) {
    const { baseline } = input
    const compared = input.summaries.filter((summary) => baseline.rows.has(summary.scenario.title))
    lines.push(
      '',
      `## Beside ${baseline.commit.slice(0, 7)} (the same bench on this machine, run ${baseline.date})`,
      '',
      '| Scenario | req/s here | req/s there | here / there | p99 ms here | p99 ms there |',
      '| --- | ---: | ---: | ---: | ---: | ---: |',
      ...compared.map((summary) => {
        const there = baseline.rows.get(summary.scenario.title)!
        const { median } = summary
        return `| ${summary.scenario.title} | ${grouped(median.rps)} | ${grouped(there.rps)} | ${pct(median.rps / there.rps)} | ${ms(median.p99)} | ${ms(there.p99)} |`
      })
    )
  }
  lines.push(
    '',
    '## Targets',
    '',
    ...verdicts.map((verdict) => `- ${mark(verdict.met)} — ${verdict.what}: ${verdict.figure}${verdict.unit} (target ${verdict.goal})`),
    '',
    ...whySection(verdicts, evidence)
  )
  // The rounds themselves, so a reader can see how much the machine's noise moved each number
  // (none in a run of the measurements of their own alone: BENCH_ONLY=slow-readers,fair-shares,long-history).
  if (input.summaries.length > 0) {
    lines.push('## Rounds (req/s, p99 ms)', '', `| Scenario | ${input.summaries[0]!.rounds.map((_, i) => `Round ${i + 1}`).join(' | ')} |`)
    lines.push(`| --- | ${input.summaries[0]!.rounds.map(() => '---:').join(' | ')} |`)
    for (const summary of input.summaries) {
      // With the target's decimals, so the median round reads as it does in the table above.
      const p99Target = p99TargetOf(summary.scenario.id)
      const cells = summary.rounds.map((round) => `${grouped(round.rps)} / ${ms(round.p99, p99Target === undefined ? undefined : TARGETS[p99Target])}`)
      lines.push(`| ${summary.scenario.id} | ${cells.join(' | ')} |`)
    }
    lines.push('')
  }
  lines.push(
    'Any scenario under a profiler: `node dist/bench/profile.js <scenario-id>` ' +
      `(ids: ${input.summaries.map((summary) => summary.scenario.id).join(', ')}).`,
    ''
  )
  return lines.join('\n')
}
