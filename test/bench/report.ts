import t from 'tap'
import { renderGlance } from '../../bench/glance.js'
import { renderReport } from '../../bench/table.js'
import { judgeTargets, TARGETS } from '../../bench/targets.js'
import { scenariosToProfile, type Evidence } from '../../bench/why.js'
import { allMet, cpuCost, fullYear, memory, reportInput, summary } from './fixtures.js'

const nothing: Evidence = { profiles: new Map(), memory: new Map() }

/** The targets an input misses, each with the figure the report gives it. */
const missedFigures = (input: ReturnType<typeof reportInput>) =>
  judgeTargets(input)
    .filter((verdict) => !verdict.met)
    .map((verdict) => [verdict.target, verdict.figure])

/** allMet() with some scenarios replaced. */
function withScenarios(...replaced: ReturnType<typeof summary>[]) {
  return allMet().map((each) => replaced.find((other) => other.scenario.id === each.scenario.id) ?? each)
}

t.test('a full run judges every target, and the report opens with a row for each', async (t) => {
  const input = reportInput(withScenarios(summary('audit-1d', { p99: 20, peakRssMb: 140 })))
  const verdicts = judgeTargets(input)
  t.strictSame(new Set(verdicts.map((verdict) => verdict.target)), new Set(Object.keys(TARGETS)))
  const report = renderReport(input, verdicts, nothing)
  const block = renderGlance(verdicts, nothing)
  t.ok(report.indexOf(block) > 0 && report.indexOf(block) < report.indexOf('| Scenario |'), 'the glance comes before the scenarios')
  for (const row of [
    '| /auth/verify vs bare route: ≥ 75% | 80% | ✓ met |',
    '| event-status p99: < 10 ms | 5.00 ms | ✓ met |',
    '| baseband-callbacks 1 day p99: < 20 ms | 15.0 ms | ✓ met |',
    '| /v1/events page1 p99: < 15 ms | 8.00 ms | ✓ met |',
    '| /v1/events page500 p99: < 15 ms | 8.00 ms | ✓ met |',
    '| audit 1 day p99: < 25 ms | 20.0 ms | ✓ met |',
    '| update-trace rate: ≥ 5,000/s | 6,000/s | ✓ met |',
    '| update-trace lost updates: 0 lost | 0 lost of 36,000 acknowledged | ✓ met |',
    '| peak RSS of one process, highest of the scenarios: < 150 MB | 140 MB (audit-1d) | ✓ met |',
    '| full-year baseband-callbacks RSS increase (largest of the runs): < 50 MB | 21.0 MB | ✓ met |',
    '| seeding: < 60 s | 17.0 s | ✓ met |',
    '| RSS growth while 100 clients that never read a year of baseband callbacks hold 32 slots until dropped (80 → 111 MB): < 50 MB | 31.0 MB | ✓ met |',
    '| update-trace beside 1,000 live streams that read, against alone, median of 3 rounds (700 of 1,000/s; 600 of 1,000/s; 800 of 1,000/s): ≥ 50% | 70% | ✓ met |',
    '| /health p95 while ten clients read the history of a 1,000,000-transition event (5,200 parts; max 31.2 ms): < 100 ms | 12.4 ms | ✓ met |',
    '| slowest of the 1,001 parts of a walk of that history by its links, alone (median 4.10 ms): < 100 ms | 18.3 ms | ✓ met |'
  ]) {
    t.match(block, row)
  }
  t.match(report, /^# frb-tracer bench — 2026-11-23/m)
  t.match(report, /^- Commit: 548c6f84151b/m)
  t.match(report, "- Other processes used 3% of the machine's CPU during the run")
  t.match(block, 'No target was missed.')
  t.match(report, '## Why each missed target is missed\n\nNo target was missed.\n')
})

t.test('a busy machine and a partial run are said, and targets not measured are listed as such', async (t) => {
  const input = reportInput([summary('bare'), summary('verify', {}, { ratioToBare: 0.8 })], {
    cpuOfOthers: { othersPercent: 48, stealPercent: 0.1 },
    fullYear: [],
    only: ['bare', 'verify']
  })
  const report = renderReport(input, judgeTargets(input), nothing)
  const block = renderGlance(judgeTargets(input), nothing)
  t.match(report, '- Partial run: bare, verify alone (BENCH_ONLY)')
  t.match(report, "Other processes used 48% of the machine's CPU during the run (hypervisor steal 0.1%); above a few percent, every number here is lower and noisier")
  t.match(block, '| `eventStatusP99Ms` | not measured (partial run) | – |')
  t.match(block, '| `fullYearRssIncreaseMb` | not measured (partial run) | – |')
})

t.test('the bounds moved from the process tests are judged as the tests judged them: under 50 MB, at least half the rate', async (t) => {
  const input = reportInput(allMet(), {
    slowReaders: { idleMb: 80, peakMb: 130, growthMb: 50, streaming: 32, refused: 68 },
    fairShares: { rounds: [{ alone: 1000, withStreams: 420 }], ratio: 0.42, readBytes: 1 }
  })
  t.strictSame(
    missedFigures(input),
    [
      ['slowReadersRssGrowthMb', '50.0'],
      ['writesBesideStreams', '42%']
    ]
  )
  const report = renderReport(input, judgeTargets(input), nothing)
  t.match(report, /RSS growth while 100 clients .*: 50\.0 MB \(target < 50 MB\)\.\*\* Not profiled/)
  t.match(report, /update-trace beside 1,000 live streams .*: 42% \(target ≥ 50%\)\.\*\* Not profiled/)
})

t.test('the history of a 1,000,000-transition event is judged: /health p95 beside ten readers, and the slowest part of a walk, each under 100 ms', async (t) => {
  const base = reportInput(allMet())
  const input = reportInput(allMet(), { longHistory: { ...base.longHistory!, healthP95Ms: 1500, partMaxMs: 240 } })
  t.strictSame(
    missedFigures(input),
    [
      ['longHistoryHealthP95Ms', '1500.0'],
      ['longHistoryPartMs', '240.0']
    ]
  )
  const report = renderReport(input, judgeTargets(input), nothing)
  t.match(report, /\/health p95 while ten clients read the history .*: 1500.0 ms \(target < 100 ms\)\.\*\* Not profiled: each part is a bounded read/)
  t.match(renderGlance([], nothing), '| `longHistoryPartMs` | not measured (partial run) | – |')
})

t.test('a write lock another process holds 12 s is judged: the slowest /health and the slowest read meanwhile, each under 100 ms', async (t) => {
  const base = reportInput(allMet())
  const input = reportInput(allMet(), { lockHeld: { ...base.lockHeld!, healthMaxMs: 5200, readMaxMs: 12_000 } })
  t.strictSame(
    missedFigures(input),
    [
      ['lockHeldHealthMs', '5200.0'],
      ['lockHeldReadMs', '12000.0']
    ]
  )
  const report = renderReport(input, judgeTargets(input), nothing)
  t.match(report, /slowest of 500 \/health while another process held the write lock 12 s .*: 5200.0 ms \(target < 100 ms\)\.\*\* Not profiled: no lock is waited for/)
  t.match(renderGlance([], nothing), '| `lockHeldHealthMs` | not measured (partial run) | – |')
})

t.test('the scenarios profiled are those behind missed latency and rate targets, each once', async (t) => {
  const input = reportInput(
    withScenarios(
      summary('verify', { peakRssMb: 207 }, { ratioToBare: 0.63 }),
      summary('events-page1', { p99: 17 }),
      summary('events-page500', { p99: 16.1 }),
      summary('update-trace', { rps: 3358 }, { writes: { acknowledged: 20_000, lost: 0 } })
    ),
    { fullYear: [fullYear(61)] }
  )
  t.strictSame(scenariosToProfile(judgeTargets(input)), ['verify', 'events-page1', 'events-page500', 'update-trace'], 'not for memory')
})

t.test('each miss is explained: by its profile, or for memory by where the memory is', async (t) => {
  const input = reportInput(
    withScenarios(summary('audit-1d', { p99: 289.8, peakRssMb: 211 }), summary('verify', { peakRssMb: 207 }, { ratioToBare: 0.8 })),
    { fullYear: [fullYear(61)] }
  )
  const verdicts = judgeTargets(input)
  const evidence: Evidence = {
    profiles: new Map([['audit-1d', cpuCost('audit-1d', 18.2)]]),
    memory: new Map([
      ['audit-1d', memory(205)],
      ['verify', memory(200)]
    ]),
    fullYearMemory: memory(150)
  }
  const report = renderReport(input, verdicts, evidence)
  const why = report.slice(report.indexOf('## Why each missed target is missed'), report.indexOf('## Rounds'))
  t.match(why, '- **audit 1 day p99: 289.8 ms (target < 25 ms).** `audit-1d` alone for 6 s on a service started with --cpu-prof')
  t.match(why, '1,000 requests, 18.2 ms of CPU each (18,200 ms busy while the load ran)')
  t.match(why, '  - Self time by package: better-sqlite3 40.0%, frb-tracer src/ 20.0%, (garbage collector) 15.0%, node core 10.0%, fastify 5.0%')
  t.match(why, '    - 30.0% `all (better-sqlite3/lib/methods/wrappers.js:1)`')
  t.match(why, '- **full-year baseband-callbacks RSS increase (largest of the runs): 61.0 MB (target < 50 MB).** The fresh process right after the request: RSS 150 MB')
  t.match(why, 'Peak RSS at or above the target (< 150 MB) in 2 scenarios')
  t.match(why, '  | audit-1d | 211 | 205 | 70 (50) | 5 | 130 |')
  t.match(why, '  | verify | 207 | 200 | 70 (50) | 5 | 125 |')

  const block = renderGlance(verdicts, evidence)
  t.match(block, '| peak RSS of one process, highest of the scenarios: < 150 MB | 211 MB (audit-1d) | ✗ missed |')
  t.match(
    block,
    '- audit 1 day p99 289.8 ms: 18.2 ms of CPU a request; self time in better-sqlite3 40%, frb-tracer src/ 20%, (garbage collector) 15%; ' +
      'top functions all (better-sqlite3/lib/methods/wrappers.js:1) 30%, join (dist/src/x.js:3) 9%, writev (node:net:1) 6%.'
  )
  t.match(block, '- peak RSS 211 MB (audit-1d): right after its last round, RSS 205 MB: V8 heap 70 MB (used 50), external 5 MB')
  t.match(block, '- full-year baseband-callbacks RSS increase (largest of the runs) 61.0 MB: right after the request, RSS 150 MB')
  t.notMatch(block, 'No target was missed.')
})

t.test('a miss the run did not profile says so, and how to profile it', async (t) => {
  const input = reportInput(withScenarios(summary('callbacks-1d', { p99: 92 })))
  const report = renderReport(input, judgeTargets(input), { ...nothing, noProfiles: 'a partial run profiles only with BENCH_WRITE=1' })
  t.match(report, 'Not profiled: a partial run profiles only with BENCH_WRITE=1 (`node dist/bench/profile.js callbacks-1d`).')
})
