/** A worker that lived this long before it died was not crashing at start: it is restarted at once. */
export const STABLE_AFTER_MS = 10_000

const MAX_DELAY_MS = 30_000

/** Short lives in a row, counting the one that just ended: reset by a worker that lived STABLE_AFTER_MS. */
export function quickDeathsAfter(previous: number, livedMs: number): number {
  return livedMs < STABLE_AFTER_MS ? previous + 1 : 0
}

/**
 * How long to wait before restarting a worker after `quickDeaths` short lives in a row: at once
 * after the first, then 1, 2, 4, 8 and 16 s, and 30 s from then on. A worker that crashes at
 * start then costs one start-up every 30 s instead of a core.
 */
export function restartDelayMs(quickDeaths: number): number {
  if (quickDeaths <= 1) return 0
  return Math.min(MAX_DELAY_MS, 1000 * 2 ** (quickDeaths - 2))
}
