/** `2026-11-23 09:12:44` from an ISO time or ms since the epoch: UTC, no zone suffix (columns say UTC). */
export function utc(time: string | number): string {
  const date = new Date(time)
  return Number.isNaN(date.getTime()) ? String(time) : date.toISOString().slice(0, 19).replace('T', ' ')
}

/** `11-23 09:12:44`: UTC without the year, where space is short. */
export const shortUtc = (time: string | number) => utc(time).slice(5)

/** A duration in seconds as an operator reads it: `45 s`, `12 min`, `3.4 h`, `2.1 d`. */
export function duration(seconds: number): string {
  const abs = Math.abs(seconds)
  if (abs < 90) return `${Math.round(seconds)} s`
  if (abs < 90 * 60) return `${Math.round(seconds / 60)} min`
  if (abs < 48 * 3600) return `${(seconds / 3600).toFixed(1)} h`
  return `${(seconds / 86_400).toFixed(1)} d`
}

/** SNR to one decimal. */
export const snr = (value: number) => value.toFixed(1)
