import { mark } from './figures.js'
import { TARGETS, type TargetKey, type Verdict } from './targets.js'
import { shortWhy, type Evidence } from './why.js'

/**
 * One verdict per target for the glance: every target as judged, except the memory target, which
 * the bench judges per scenario and the glance states once, for the scenario that peaked.
 */
export function glanceVerdicts(verdicts: Verdict[]): Map<TargetKey, Verdict[]> {
  const byTarget = new Map<TargetKey, Verdict[]>()
  for (const target of Object.keys(TARGETS) as TargetKey[]) {
    const judged = verdicts.filter((verdict) => verdict.target === target)
    const peak = () => judged.reduce((highest, verdict) => (verdict.measured > highest.measured ? verdict : highest))
    byTarget.set(target, target === 'peakRssMb' && judged.length > 0 ? [peak()] : judged)
  }
  return byTarget
}

/**
 * The report's first section: every target in a row, met, missed or not measured, and why each miss
 * is one in a line. The bench writes it into bench/results/latest.md only; the docs link that file.
 */
export function renderGlance(verdicts: Verdict[], evidence: Evidence): string {
  const rows: string[] = []
  const missed: Verdict[] = []
  for (const [target, judged] of glanceVerdicts(verdicts)) {
    if (judged.length === 0) rows.push(`| \`${target}\` | not measured (${target === 'updateTraceVsBaseline' ? 'no BENCH_BASELINE' : 'partial run'}) | – |`)
    for (const verdict of judged) {
      const measured = `${verdict.figure}${verdict.unit}${target === 'peakRssMb' ? ` (${verdict.scenario})` : ''}`
      const what = target === 'peakRssMb' ? 'peak RSS of one process, highest of the scenarios' : verdict.what
      rows.push(`| ${what}: ${verdict.goal} | ${measured} | ${mark(verdict.met)} |`)
      if (!verdict.met) missed.push(verdict)
    }
  }
  return [
    '## At a glance',
    '',
    '| Target | Measured | Verdict |',
    '| --- | --- | --- |',
    ...rows,
    '',
    ...(missed.length === 0
      ? ['No target was missed.']
      : ['Why each missed target is missed (from the same run: a CPU profile of the scenario alone, or the service’s memory from its /metrics; the longer form below):', '', ...missed.map((verdict) => shortWhy(verdict, evidence))])
  ].join('\n')
}
