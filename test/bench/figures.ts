import t from 'tap'
import { grouped, mb, ms, pct, tenths } from '../../bench/figures.js'
import { renderReport } from '../../bench/table.js'
import { judgeTargets } from '../../bench/targets.js'
import { allMet, reportInput, summary } from './fixtures.js'

t.test('a figure beside its target gets the decimals that keep it off the target', async (t) => {
  t.equal(ms(9.996, 10), '9.996', 'not 10.00 for a p99 under 10 ms')
  t.equal(ms(9.9996, 10), '9.9996', 'as many as it takes')
  t.equal(ms(14.96, 15), '14.96', 'the one-decimal figures too')
  t.equal(ms(15.04, 15), '15.04', 'and just over the target, by how much')
  t.equal(grouped(4999.6, 5000), '4,999.6', 'a rate just under its target')
  t.equal(pct(0.7496, 0.75), '74.96%', 'a ratio just under its target')
  t.equal(mb(149.6, 150), '149.6')
  t.equal(tenths(49.96, 50), '49.96')
})

t.test('a figure away from its target, at it exactly, or without one keeps the usual decimals', async (t) => {
  t.equal(ms(9.96, 10), '9.96')
  t.equal(ms(10, 10), '10.0', 'the target itself, which a "<" target misses')
  t.equal(ms(9.996), '10.00', 'no target, no extra decimals')
  t.equal(ms(Number.NaN, 10), '–')
  t.equal(grouped(3358.2, 5000), '3,358')
  t.equal(pct(0.63, 0.75), '63%')
  t.equal(pct(undefined, 0.75), '–')
})

t.test('the report prints a p99 of 9.996 ms as met and as 9.996, in the table, the targets and the rounds', async (t) => {
  const summaries = allMet().map((each) => (each.scenario.id === 'event-status' ? summary('event-status', { p99: 9.996 }) : each))
  const input = reportInput(summaries)
  const report = renderReport(input, judgeTargets(input), { profiles: new Map(), memory: new Map() })
  t.match(report, '| 9.996 ✓ met (< 10 ms) |')
  t.match(report, '- ✓ met — event-status p99: 9.996 ms (target < 10 ms)')
  t.match(report, '| event-status | 1,000 / 9.996 |')
  t.notMatch(report, '10.00')
})
