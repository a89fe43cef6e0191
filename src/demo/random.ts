/** A uniform number in [0, 1). */
export type Random = () => number

/**
 * mulberry32: a tiny 32-bit generator, fast and good enough for demo data, and the same sequence
 * for the same seed on every machine and Node version (Math.random cannot be seeded).
 */
export function mulberry32(seed: number): Random {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}

/** Picks from `items` with probability proportional to `weight`; cumulative weights are precomputed. */
export function weightedPicker<T extends { weight: number }>(items: readonly T[]): (random: Random) => T {
  const total = items.reduce((sum, item) => sum + item.weight, 0)
  let running = 0
  const bounds = items.map((item) => (running += item.weight / total))
  return (random) => {
    const u = random()
    for (let i = 0; i < bounds.length - 1; i++) if (u < bounds[i]!) return items[i]!
    return items[items.length - 1]!
  }
}

export const round2 = (value: number) => Math.round(value * 100) / 100

/** Between `low` and `high` on a log scale: DMs spread over decades. */
export const logUniform = (random: Random, low: number, high: number) => low * (high / low) ** random()
