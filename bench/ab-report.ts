import { compare, grewBeyond, type Comparison } from './ab-stats.js'
import type { AbRun, Measurement, Slot } from './ab.js'
import type { CpuCost } from './cpu-cost.js'
import { grouped, ms } from './figures.js'

/** What the A/B report is made of, apart from the processes that measured it. */
export interface AbReportInput {
  date: Date
  machineFacts: string[]
  baseline: string
  current: string
  rounds: number
  cpuSeconds: number
  run: Pick<AbRun, 'amounts' | 'slots' | 'pinned' | 'othersPercent'>
  /** Profiles of the scenarios held against the baseline, by scenario id. */
  profiles: Map<string, { baseline: CpuCost; current: CpuCost }>
  /** Why a profile is missing, by scenario id. */
  unprofiled?: Map<string, string>
}

export interface ScenarioComparison {
  id: string
  comparison: Comparison
  baseline: Measurement[]
  current: Measurement[]
}

const PRECISION = 0.05

/** The rounds in which both builds measured the scenario, paired by round. */
function paired(slots: readonly Slot[], id: string) {
  const rounds = [...new Set(slots.map((slot) => slot.round))]
  return rounds.flatMap((round) => {
    const of = (build: Slot['build']) => slots.find((slot) => slot.round === round && slot.build === build)?.figures.get(id)
    const baseline = of('baseline')
    const current = of('current')
    return baseline === undefined || current === undefined ? [] : [{ baseline, current }]
  })
}

/** Every scenario both builds measured, their CPU a request compared round by round. */
export function compareScenarios(slots: readonly Slot[]): ScenarioComparison[] {
  const ids = [...new Set(slots.flatMap((slot) => [...slot.figures.keys()]))]
  return ids.flatMap((id) => {
    const pairs = paired(slots, id)
    if (pairs.length === 0) return []
    const comparison = compare(
      pairs.map(({ baseline, current }) => ({ baseline: baseline.usPerRequest, current: current.usPerRequest })),
      PRECISION
    )
    return [{ id, comparison, baseline: pairs.map((pair) => pair.baseline), current: pairs.map((pair) => pair.current) }]
  })
}

/** The scenarios whose CPU a request grew by more than 5%, with an interval that leaves out no change. */
export const grown = (comparisons: readonly ScenarioComparison[]) => comparisons.filter((each) => grewBeyond(each.comparison, PRECISION))

/**
 * Verify's share of the bare route in each build: the bare route's CPU a request over verify's in
 * the same round (what one core would serve of verify against the bare route), and the two builds'
 * shares beside each other.
 */
export function verifyShares(slots: readonly Slot[]) {
  const share = (build: Slot['build']) => {
    const rounds = slots.filter((slot) => slot.build === build && slot.figures.has('bare') && slot.figures.has('verify'))
    if (rounds.length === 0) return undefined
    return compare(rounds.map((slot) => ({ baseline: slot.figures.get('verify')!.usPerRequest, current: slot.figures.get('bare')!.usPerRequest })))
  }
  const baseline = share('baseline')
  const current = share('current')
  const pairs = paired(slots, 'verify').flatMap((_, index) => {
    const of = (build: Slot['build']) => slots.filter((slot) => slot.build === build && slot.figures.has('bare') && slot.figures.has('verify'))[index]
    const [before, after] = [of('baseline'), of('current')]
    if (before === undefined || after === undefined) return []
    const ratio = (slot: Slot) => slot.figures.get('bare')!.usPerRequest / slot.figures.get('verify')!.usPerRequest
    return [{ baseline: ratio(before), current: ratio(after) }]
  })
  return { baseline, current, change: pairs.length === 0 ? undefined : compare(pairs) }
}

const percent = (ratio: number) => `${(100 * ratio).toFixed(1)}%`
const signed = (ratio: number) => `${ratio >= 1 ? '+' : '−'}${Math.abs(100 * (ratio - 1)).toFixed(1)}%`
const interval = (c: Comparison) => (Number.isNaN(c.low) ? '–' : `${signed(c.low)} … ${signed(c.high)}`)
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted.length % 2 === 1 ? sorted[(sorted.length - 1) / 2]! : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2
}
const us = (value: number) => value.toFixed(value < 100 ? 1 : 0)

/** The words of a call, as the report gives them. */
export function callText(c: Comparison): string {
  if (c.ratios.length < 2) return 'one round: no call'
  if (c.call === 'none') return 'no difference called'
  return `${c.call === 'more' ? 'more' : 'less'} CPU a request${grewBeyond(c, PRECISION) ? ', over 5%' : ''}`
}

const roundsFor = (c: Comparison) => (c.roundsFor === undefined ? '–' : c.roundsFor >= 10_000 ? '> 10,000' : String(c.roundsFor))

/** The Markdown report of an A/B run. */
export function renderAbReport(input: AbReportInput): string {
  const { run } = input
  const comparisons = compareScenarios(run.slots)
  const shares = verifyShares(run.slots)
  const others = run.slots.map((slot) => slot.othersPercent)
  const rounds = Math.max(0, ...comparisons.map((each) => each.comparison.ratios.length))
  const lines = [
    `# CPU a request beside ${input.baseline.slice(0, 7)} — ${input.date.toISOString()}`,
    '',
    ...input.machineFacts.map((fact) => `- ${fact}`),
    `- Baseline: ${input.baseline}; this build: ${input.current}.`,
    `- Method: ${input.rounds} rounds; each round starts a fresh service of each build (the baseline first in odd rounds, this build ` +
      'first in even ones), each build through its own bench code on its own store, and in it measures every scenario after a ' +
      'warm-up as the CPU time (user + system, from /proc) of the service’s processes over a fixed number of requests. ' +
      (run.pinned ? `The service runs on core 1, the load generator on core 0 (taskset). ` : 'No pinning: taskset or a second core is missing. ') +
      `Each build's requests a measurement were set from its first warm-up of the scenario, to take about ${input.cpuSeconds} s of CPU, and kept for every round. ` +
      'verify-2-workers is left out unless named: two workers pinned to one core measure verify again, plus the cluster’s hand-off.',
    `- Other processes used ${input.run.othersPercent.toFixed(0)}% of the machine's CPU during the run ` +
      `(${Math.min(...others).toFixed(0)}–${Math.max(...others).toFixed(0)}% by slot); it moves req/s much more than CPU a request.`,
    '',
    '## Every scenario: µs of CPU a request',
    '',
    'Medians over the rounds; the ratio is this build over the baseline, round by round, then their mean with a 95% Student t interval. ' +
      'A difference is called only when the interval leaves out 0. "Rounds for ±5%": rounds an interval of ±5% would need at the spread seen here.',
    '',
    '| Scenario | Requests (baseline / this) | Baseline µs | This µs | Mean change | 95% interval | Call | Rounds for ±5% | req/s baseline / this | p99 ms baseline / this |',
    '| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |',
    ...comparisons.map(({ id, comparison, baseline, current }) => {
      const m = (figures: Measurement[], pick: (figure: Measurement) => number) => median(figures.map(pick))
      const [before, after] = [run.amounts.baseline.get(id), run.amounts.current.get(id)]
      const requests = before === after ? grouped(before ?? Number.NaN) : `${grouped(before ?? Number.NaN)} / ${grouped(after ?? Number.NaN)}`
      return `| ${id} | ${requests} | ${us(m(baseline, (f) => f.usPerRequest))} | ${us(m(current, (f) => f.usPerRequest))} | ${signed(comparison.mean)} | ${interval(comparison)} | ${callText(comparison)} | ${roundsFor(comparison)} | ${grouped(m(baseline, (f) => f.rps))} / ${grouped(m(current, (f) => f.rps))} | ${ms(m(baseline, (f) => f.p99))} / ${ms(m(current, (f) => f.p99))} |`
    }),
    '',
    '## Per-round ratios (this build / baseline)',
    '',
    `| Scenario | ${Array.from({ length: rounds }, (_, i) => `${i + 1}`).join(' | ')} |`,
    `| --- |${' ---: |'.repeat(rounds)}`,
    ...comparisons.map(({ id, comparison }) => `| ${id} | ${comparison.ratios.map((ratio) => ratio.toFixed(3)).join(' | ')} |`),
    ''
  ]
  const errors = run.slots.flatMap((slot) =>
    [...slot.figures].filter(([, f]) => f.unexpected + f.transportErrors + (f.lost ?? 0) > 0).map(([id, f]) => `round ${slot.round} ${slot.build} ${id}: ${f.unexpected} unexpected statuses, ${f.transportErrors} transport errors${f.lost === undefined ? '' : `, ${f.lost} lost writes`}`)
  )
  lines.push(errors.length === 0 ? 'Every response had its expected status; no write was lost.' : `Errors: ${errors.join('; ')}.`, '')

  lines.push('## GET /auth/verify’s share of the bare route', '')
  if (shares.baseline === undefined || shares.current === undefined) {
    lines.push('Not measured: the run left out `bare` or `verify`.', '')
  } else {
    const share = (c: Comparison) => `${percent(c.mean)}${Number.isNaN(c.low) ? '' : ` (95% interval ${percent(c.low)} … ${percent(c.high)})`}`
    lines.push(
      'The bare route’s CPU a request over verify’s, in the same fresh process pair of each round: the share of the bare route’s rate one core gives verify.',
      '',
      `- Baseline: ${share(shares.baseline)}`,
      `- This build: ${share(shares.current)}`,
      ...(shares.change === undefined ? [] : [`- This build’s share over the baseline’s: ${signed(shares.change.mean)}, interval ${interval(shares.change)}; ${shares.change.call === 'none' ? 'no difference called' : shares.change.call === 'more' ? 'a larger share' : 'a smaller share'}.`]),
      ''
    )
  }

  lines.push('## Held to the baseline', '')
  const over = grown(comparisons)
  if (over.length === 0) lines.push('No scenario’s CPU a request grew by more than 5% with an interval that leaves out no change.', '')
  for (const { id, comparison } of over) {
    lines.push(`### ${id}: ${signed(comparison.mean)} (${interval(comparison)})`, '')
    const profile = input.profiles.get(id)
    if (profile === undefined) {
      lines.push(`Not profiled: ${input.unprofiled?.get(id) ?? 'profiling was not asked for'}.`, '')
      continue
    }
    lines.push(
      `Self time, top functions (CPU profile of each build; ${us(profile.baseline.msPerRequest * 1000)} and ${us(profile.current.msPerRequest * 1000)} µs a request of the main thread under the profiler):`,
      '',
      '| Baseline | | This build | |',
      '| --- | ---: | --- | ---: |',
      ...Array.from({ length: Math.max(profile.baseline.byFunction.length, profile.current.byFunction.length) }, (_, i) => {
        const cell = (cost: CpuCost) => {
          const share = cost.byFunction[i]
          return share === undefined ? '| |' : `| \`${share.name}\` | ${share.percent.toFixed(1)}% |`
        }
        return `${cell(profile.baseline)} ${cell(profile.current).slice(1)}`
      }),
      '',
      `Profiles: \`${profile.baseline.file}\` (in the baseline's checkout) and \`${profile.current.file}\`.`,
      ''
    )
  }
  return lines.join('\n')
}
