import { NOISY_PERCENT } from './cpu-share.js'
import { mark } from './figures.js'
import type { ReportInput } from './table.js'
import { TARGETS, type TargetKey, type Verdict } from './targets.js'
import { shortWhy, type Evidence } from './why.js'

/**
 * One verdict per target for the README: every target as judged, except the memory target, which
 * the bench judges per scenario and the README states once, for the scenario that peaked.
 */
export function readmeVerdicts(verdicts: Verdict[]): Map<TargetKey, Verdict[]> {
  const byTarget = new Map<TargetKey, Verdict[]>()
  for (const target of Object.keys(TARGETS) as TargetKey[]) {
    const judged = verdicts.filter((verdict) => verdict.target === target)
    const peak = () => judged.reduce((highest, verdict) => (verdict.measured > highest.measured ? verdict : highest))
    byTarget.set(target, target === 'peakRssMb' && judged.length > 0 ? [peak()] : judged)
  }
  return byTarget
}

/** The block between the README's bench markers: when and where it ran, every target, and why each miss is one. */
export function renderReadmeBlock(input: ReportInput, verdicts: Verdict[], evidence: Evidence): string {
  const { machine, cpuOfOthers } = input
  const commit = machine.commit.replace(/^([0-9a-f]{12})[0-9a-f]{28}/, '$1')
  const noisy = cpuOfOthers.othersPercent > NOISY_PERCENT ? ': every figure is lower and noisier than on a quiet machine' : ''
  const rows: string[] = []
  const missed: Verdict[] = []
  for (const [target, judged] of readmeVerdicts(verdicts)) {
    if (judged.length === 0) rows.push(`| \`${target}\` | not measured (${target === 'updateTraceVsBaseline' ? 'no BENCH_BASELINE' : 'partial run'}) | – |`)
    for (const verdict of judged) {
      const measured = `${verdict.figure}${verdict.unit}${target === 'peakRssMb' ? ` (${verdict.scenario})` : ''}`
      const what = target === 'peakRssMb' ? 'peak RSS of one process, highest of the scenarios' : verdict.what
      rows.push(`| ${what}: ${verdict.goal} | ${measured} | ${mark(verdict.met)} |`)
      if (!verdict.met) missed.push(verdict)
    }
  }
  return [
    '<!-- Written by `npm run bench` (bench/readme-block.ts): edits between the bench markers are lost on its next full run. -->',
    `Last run: ${input.date.toISOString().slice(0, 10)}, commit \`${commit}\`, ${machine.cpu} × ${machine.cores} ` +
      `(${machine.memoryGiB.toFixed(1)} GiB), Node ${machine.node}, the load generator on the same cores` +
      (input.only === undefined ? '' : `; partial run of ${input.only.join(', ')} (BENCH_ONLY)`) +
      `. Other processes used ${cpuOfOthers.othersPercent.toFixed(0)}% of the CPU meanwhile${noisy}. ` +
      'The full table, the rounds and the longer profiles: `bench/results/latest.md`.',
    '',
    '| Target | Measured | Verdict |',
    '| --- | --- | --- |',
    ...rows,
    '',
    ...(missed.length === 0
      ? ['No target was missed.']
      : ['Why each missed target is missed (from the same run: a CPU profile of the scenario alone, or the service’s memory from its /metrics):', '', ...missed.map((verdict) => shortWhy(verdict, evidence))])
  ].join('\n')
}
