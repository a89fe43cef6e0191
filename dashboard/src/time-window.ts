/** A window as the API takes it: ISO 8601 UTC bounds, start inclusive, end exclusive. */
export interface Window {
  start_time_utc: string
  end_time_utc: string
}

const HOUR = 3_600_000

export const PRESETS = [
  { id: '1h', label: 'Last hour', span: HOUR },
  { id: '6h', label: 'Last 6 hours', span: 6 * HOUR },
  { id: '24h', label: 'Last 24 hours', span: 24 * HOUR },
  { id: '3d', label: 'Last 3 days', span: 72 * HOUR },
  { id: '7d', label: 'Last 7 days', span: 168 * HOUR }
] as const
export type PresetId = (typeof PRESETS)[number]['id']

export const DEFAULT_PRESET: PresetId = '24h'

/** What the operator picked: a span ending now (moving with the clock), or two fixed bounds. */
export type WindowChoice = { preset: PresetId } | { start: number; end: number }

/** The window a choice means at `now` (ms since the epoch). */
export function windowAt(choice: WindowChoice, now: number): Window {
  const [start, end] =
    'preset' in choice ? [now - PRESETS.find((preset) => preset.id === choice.preset)!.span, now] : [choice.start, choice.end]
  return { start_time_utc: new Date(start).toISOString(), end_time_utc: new Date(end).toISOString() }
}

export const windowQuery = (window: Window) =>
  `start_time_utc=${encodeURIComponent(window.start_time_utc)}&end_time_utc=${encodeURIComponent(window.end_time_utc)}`

const INPUT = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?$/

/**
 * A bound typed as the page shows times, read as UTC: `YYYY-MM-DD HH:MM[:SS]` (or with `T`), or a
 * date alone for its midnight. Undefined when it is not one, or names no real time (`02-30`, `25:00`).
 */
export function fromInput(value: string): number | undefined {
  const match = INPUT.exec(value.trim())
  if (match === null) return undefined
  const [year, month, day, hour = 0, minute = 0, second = 0] = match.slice(1).map((part) => (part === undefined ? undefined : Number(part)))
  const time = Date.UTC(year!, month! - 1, day, hour, minute, second)
  const back = new Date(time)
  // Date.UTC rolls 2026-02-30 over into March; a real time reads back as it was written.
  const real = back.getUTCDate() === day && back.getUTCMonth() === month! - 1 && back.getUTCHours() === hour && back.getUTCMinutes() === minute
  return real && second < 60 ? time : undefined
}

/** A time as the bound inputs show it: UTC, to the minute, as the rest of the page writes times. */
export const toInput = (time: number) => new Date(time).toISOString().slice(0, 16).replace('T', ' ')

/** Why two bounds do not make a window, or undefined when they do. */
export function customWindowProblem(start: number | undefined, end: number | undefined): string | undefined {
  if (start === undefined) return 'Give the start of the window as YYYY-MM-DD HH:MM, in UTC.'
  if (end === undefined) return 'Give the end of the window as YYYY-MM-DD HH:MM, in UTC.'
  if (end <= start) return 'The end of the window must be after its start.'
  return undefined
}
