/**
 * How the reports print figures. A figure printed beside a verdict gets the decimals it needs not
 * to round onto its target: a p99 of 9.996 ms against "< 10 ms" prints as 9.996, never as 10.00
 * beside "met". Every target is a round number, so rounding can only land on it, never past it.
 */

/** Enough for any figure the bench measures (latencies come in nanoseconds, so in ms they end by 6 decimals). */
const MAX_DECIMALS = 6

/** `decimals`, or more while `value` (not the target itself) would print as `target`. */
export function decimalsBeside(value: number, decimals: number, target: number | undefined): number {
  let needed = decimals
  while (target !== undefined && value !== target && needed < MAX_DECIMALS && Number(value.toFixed(needed)) === target) needed += 1
  return needed
}

/** Milliseconds: 2 decimals below 10, 1 above; '–' when nothing was measured. */
export function ms(value: number, target?: number): string {
  if (Number.isNaN(value)) return '–'
  return value.toFixed(decimalsBeside(value, value < 10 ? 2 : 1, target))
}

/** A count or rate with thousands separators, whole unless that would print the target. */
export function grouped(value: number, target?: number): string {
  const decimals = decimalsBeside(value, 0, target)
  return value.toLocaleString('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals })
}

/** A ratio as a whole percentage; the target is a ratio too (0.75). */
export function pct(ratio: number | undefined, target?: number): string {
  if (ratio === undefined) return '–'
  const percent = ratio * 100
  const goal = target === undefined ? undefined : target * 100
  return `${percent.toFixed(decimalsBeside(percent, 0, goal))}%`
}

/** Megabytes, whole. */
export function mb(value: number, target?: number): string {
  return value.toFixed(decimalsBeside(value, 0, target))
}

/** One decimal (MB of an increase, seconds of seeding). */
export function tenths(value: number, target?: number): string {
  return value.toFixed(decimalsBeside(value, 1, target))
}

export const mark = (met: boolean) => (met ? '✓ met' : '✗ missed')
