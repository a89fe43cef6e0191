/**
 * The arithmetic of an A/B run (issue 31), apart from the processes that produce its inputs so a
 * test can hold it to fixed figures. A round is one fresh process of each build; its ratio is this
 * build's figure over the baseline's. Rounds are summarised by the mean of their ratios and a
 * Student t interval around it, and a difference is called only when the interval leaves out 1.
 */

/** Two-sided 95% quantiles of Student's t (t at 0.975) for 1 … 30 degrees of freedom. */
const T_975 = [
  12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11, 2.101, 2.093,
  2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042
]
const Z_975 = 1.959964

/**
 * t at 0.975 for `df` degrees of freedom: the table up to 30, and above it the Cornish-Fisher
 * expansion around the normal quantile, which is within 0.001 of the exact value there.
 */
export function tQuantile975(df: number): number {
  if (!Number.isInteger(df) || df < 1) throw new RangeError(`degrees of freedom must be a positive integer, not ${df}`)
  if (df <= T_975.length) return T_975[df - 1]!
  const z = Z_975
  return z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2)
}

/** One round's figure of each build (µs of CPU a request, or any other cost). */
export interface RoundPair {
  baseline: number
  current: number
}

export type Call = 'more' | 'less' | 'none'

export interface Comparison {
  /** current / baseline, round by round. */
  ratios: number[]
  mean: number
  /** Sample standard deviation of the ratios (n - 1); NaN with fewer than two rounds. */
  sd: number
  /** The 95% interval of the mean ratio; NaN bounds with fewer than two rounds. */
  low: number
  high: number
  /** `more`: the interval lies above 1; `less`: below it; `none`: it holds 1 (or there is no interval). */
  call: Call
  /** Rounds whose interval would be narrower than ±`precision` at this spread; undefined below two rounds. */
  roundsFor: number | undefined
  precision: number
}

const mean = (values: readonly number[]) => values.reduce((sum, value) => sum + value, 0) / values.length

/** Sample standard deviation (divisor n - 1). */
export function standardDeviation(values: readonly number[]): number {
  if (values.length < 2) return Number.NaN
  const centre = mean(values)
  return Math.sqrt(values.reduce((sum, value) => sum + (value - centre) ** 2, 0) / (values.length - 1))
}

/**
 * The fewest rounds n (at least 2) with t(n - 1) · sd / √n below `precision`: the rounds an interval
 * of ± that width needs, if later rounds spread as these did. Past `limit` it gives up (returns limit).
 */
export function roundsNeeded(sd: number, precision: number, limit = 10_000): number {
  if (!(precision > 0)) throw new RangeError('precision must be positive')
  for (let n = 2; n < limit; n++) if ((tQuantile975(n - 1) * sd) / Math.sqrt(n) < precision) return n
  return limit
}

/** The rounds of one figure beside the baseline: ratios, their mean, the interval and the call. */
export function compare(rounds: readonly RoundPair[], precision = 0.05): Comparison {
  if (rounds.length === 0) throw new RangeError('no rounds to compare')
  const ratios = rounds.map(({ baseline, current }) => {
    if (!(baseline > 0) || !Number.isFinite(current)) throw new RangeError(`a round needs a positive baseline and a finite figure, not ${baseline} and ${current}`)
    return current / baseline
  })
  const centre = mean(ratios)
  const sd = standardDeviation(ratios)
  const half = ratios.length < 2 ? Number.NaN : (tQuantile975(ratios.length - 1) * sd) / Math.sqrt(ratios.length)
  const low = centre - half
  const high = centre + half
  const call: Call = low > 1 ? 'more' : high < 1 ? 'less' : 'none'
  return { ratios, mean: centre, sd, low, high, call, roundsFor: ratios.length < 2 ? undefined : roundsNeeded(sd, precision), precision }
}

/**
 * Held to the baseline: a cost that grew by more than `tolerance` (the mean ratio above 1 + it)
 * with an interval that leaves out no change. A growth within the noise is not named.
 */
export const grewBeyond = (comparison: Comparison, tolerance = 0.05) => comparison.call === 'more' && comparison.mean > 1 + tolerance
