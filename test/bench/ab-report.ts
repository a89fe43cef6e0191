import t from 'tap'
import type { Measurement, Side, Slot } from '../../bench/ab.js'
import { compareScenarios, grown, renderAbReport, verifyShares } from '../../bench/ab-report.js'

const figure = (usPerRequest: number): Measurement => ({ usPerRequest, responses: 1000, rps: 1e6 / usPerRequest, p50: 1, p99: 2, unexpected: 0, transportErrors: 0 })

/** A slot measuring bare, verify and update-trace at these µs a request. */
const slot = (round: number, build: Side, bare: number, verify: number, update: number): Slot => ({
  round,
  build,
  othersPercent: 10,
  figures: new Map([
    ['bare', figure(bare)],
    ['verify', figure(verify)],
    ['update-trace', figure(update)]
  ])
})

/** Three rounds, alternating which build goes first; update-trace 10% dearer every round, ±2%. */
const slots = [
  slot(1, 'baseline', 15, 25, 50),
  slot(1, 'current', 15, 25, 55),
  slot(2, 'current', 16, 24, 56.1),
  slot(2, 'baseline', 16, 24, 51),
  slot(3, 'baseline', 14, 20, 60),
  slot(3, 'current', 14, 20, 64.8)
]

t.test('scenarios are paired by round whichever build went first', async (t) => {
  const [bare, verify, update] = compareScenarios(slots)
  t.same(bare!.comparison.ratios, [1, 1, 1])
  t.equal(verify!.comparison.call, 'none', 'identical rounds: an interval of zero width around 1 leaves nothing to call')
  t.same(
    update!.comparison.ratios.map((ratio) => Number(ratio.toFixed(3))),
    [1.1, 1.1, 1.08]
  )
  t.equal(update!.comparison.call, 'more')
  t.same(
    grown(compareScenarios(slots)).map((each) => each.id),
    ['update-trace']
  )
})

t.test("verify's share of the bare route is the bare route's CPU a request over verify's, round by round", async (t) => {
  const shares = verifyShares(slots)
  // 15/25, 16/24, 14/20: 0.6, 0.6667, 0.7
  t.ok(Math.abs(shares.baseline!.mean - (0.6 + 2 / 3 + 0.7) / 3) < 1e-12)
  t.ok(Math.abs(shares.change!.mean - 1) < 1e-12, 'the same share at both builds')
})

t.test('the report names the grown scenario and says why it has no profile', async (t) => {
  const report = renderAbReport({
    date: new Date('2026-11-26T22:00:00Z'),
    machineFacts: ['CPU: test × 2'],
    baseline: '958e2071c8364bed9ec90ba857bbe559f9c055ba',
    current: 'abcdef0',
    rounds: 3,
    cpuSeconds: 2,
    run: {
      amounts: { baseline: new Map([['update-trace', 10_000]]), current: new Map([['update-trace', 9_000]]) },
      slots,
      pinned: true,
      othersPercent: 10
    },
    profiles: new Map(),
    unprofiled: new Map([['update-trace', 'a partial run profiles only with BENCH_WRITE=1']])
  })
  t.match(report, '# CPU a request beside 958e207')
  t.match(report, '| update-trace | 10,000 / 9,000 | 51.0 | 56.1 | +9.3% | +6.5% … +12.2% |')
  t.match(report, 'more CPU a request, over 5%')
  t.match(report, '### update-trace: +9.3%')
  t.match(report, 'Not profiled: a partial run profiles only with BENCH_WRITE=1.')
  t.match(report, '- Baseline: 65.6% (95% interval')
})
