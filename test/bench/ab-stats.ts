import t from 'tap'
import { compare, grewBeyond, roundsNeeded, standardDeviation, tQuantile975 } from '../../bench/ab-stats.js'

/** Rounds whose ratios (current / baseline) are exactly these, against a baseline of 100 µs. */
const rounds = (...ratios: number[]) => ratios.map((ratio) => ({ baseline: 100, current: 100 * ratio }))

t.test('t quantiles: the table for small samples, the expansion past it', async (t) => {
  t.equal(tQuantile975(1), 12.706)
  t.equal(tQuantile975(4), 2.776)
  t.equal(tQuantile975(30), 2.042)
  t.ok(Math.abs(tQuantile975(40) - 2.021) < 0.001, 't(40) is 2.021')
  t.ok(Math.abs(tQuantile975(120) - 1.98) < 0.001, 't(120) is 1.980')
  t.throws(() => tQuantile975(0), RangeError)
})

t.test('a spread that holds 1 calls nothing, and says how many rounds 5% would need', async (t) => {
  const result = compare(rounds(1.1, 1.2, 1.0, 1.1))
  t.same(result.ratios.map((ratio) => Number(ratio.toFixed(6))), [1.1, 1.2, 1, 1.1])
  t.ok(Math.abs(result.mean - 1.1) < 1e-12, 'the mean of the ratios')
  // sd = √(0.02 / 3) = 0.081650; half-width = t(3) · sd / √4 = 3.182 · 0.040825 = 0.129905
  t.ok(Math.abs(result.sd - 0.0816497) < 1e-6)
  t.ok(Math.abs(result.low - 0.970095) < 1e-6)
  t.ok(Math.abs(result.high - 1.229905) < 1e-6)
  t.equal(result.call, 'none')
  t.notOk(grewBeyond(result), 'a 10% mean inside the noise is not named')
  // n = 12: 2.201 · 0.08165 / √12 = 0.0519; n = 13: 2.179 · 0.08165 / √13 = 0.0493
  t.equal(result.roundsFor, 13)
})

t.test('a tight growth past 5% is called and held against the baseline', async (t) => {
  const result = compare(rounds(1.1, 1.12, 1.08, 1.1, 1.1))
  // sd = √(0.0008 / 4) = 0.014142; half-width = 2.776 · 0.014142 / √5 = 0.017557
  t.ok(Math.abs(result.low - 1.082443) < 1e-6)
  t.ok(Math.abs(result.high - 1.117557) < 1e-6)
  t.equal(result.call, 'more')
  t.ok(grewBeyond(result))
  // n = 2: 12.706 · 0.014142 / √2 = 0.127; n = 3: 4.303 · 0.014142 / √3 = 0.0351
  t.equal(result.roundsFor, 3)
})

t.test('a growth called but under the tolerance is not held against the baseline', async (t) => {
  const result = compare(rounds(1.03, 1.03, 1.04, 1.02))
  t.equal(result.call, 'more')
  t.notOk(grewBeyond(result))
})

t.test('a fall is called as less', async (t) => {
  const result = compare([
    { baseline: 50, current: 45 },
    { baseline: 50, current: 46 },
    { baseline: 50, current: 44 }
  ])
  // ratios 0.90, 0.92, 0.88: sd 0.02, half-width 4.303 · 0.02 / √3 = 0.049687
  t.ok(Math.abs(result.mean - 0.9) < 1e-12)
  t.ok(Math.abs(result.high - 0.949687) < 1e-6)
  t.equal(result.call, 'less')
  t.notOk(grewBeyond(result))
})

t.test('one round has a ratio but no interval, no call and no estimate of rounds', async (t) => {
  const result = compare(rounds(1.3))
  t.ok(Math.abs(result.mean - 1.3) < 1e-12)
  t.ok(Number.isNaN(result.low) && Number.isNaN(result.high) && Number.isNaN(result.sd))
  t.equal(result.call, 'none')
  t.equal(result.roundsFor, undefined)
})

t.test('rounds needed: identical rounds need two, wider spreads more, and bad input is refused', async (t) => {
  t.equal(roundsNeeded(0, 0.05), 2)
  t.equal(roundsNeeded(0.1, 0.05), 18, 'n = 18: 2.110 · 0.1 / √18 = 0.0497; n = 17 gives 0.0514')
  t.equal(roundsNeeded(10, 0.05, 50), 50, 'gives up at the limit')
  t.ok(Number.isNaN(standardDeviation([1])))
  t.throws(() => compare([]), RangeError)
  t.throws(() => compare([{ baseline: 0, current: 1 }]), RangeError)
  t.throws(() => roundsNeeded(0.1, 0), RangeError)
})
