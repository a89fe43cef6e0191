const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const

/** A duration such as `90s`, `1.5h` or `7d`, in whole milliseconds; throws an Error for the caller to name the value. */
export function parseDuration(text: string): number {
  const match = /^(-?\d+(?:\.\d+)?)([a-zA-Z]*)$/.exec(text)
  if (match === null) throw new Error('not a number with a unit s, m, h or d')
  const [, amount = '', unit = ''] = match
  if (!Object.hasOwn(UNIT_MS, unit)) throw new Error('the unit must be s, m, h or d')
  const ms = Math.round(Number(amount) * UNIT_MS[unit as keyof typeof UNIT_MS])
  if (!(ms > 0)) throw new Error('a duration must be longer than zero')
  if (!Number.isSafeInteger(ms)) throw new Error('too long')
  return ms
}
