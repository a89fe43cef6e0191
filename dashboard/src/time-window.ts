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

/** `YYYY-MM-DDTHH:MM` of a datetime-local input, read as UTC; undefined when empty or malformed. */
export function fromInput(value: string): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(value)) return undefined
  const time = Date.parse(`${value}Z`)
  // Date.parse rolls 2026-02-30 over into March; a real date reads back as it was written.
  return Number.isNaN(time) || toInput(time) !== value.slice(0, 16) ? undefined : time
}

/** A time as a datetime-local input shows it, in UTC to the minute. */
export const toInput = (time: number) => new Date(time).toISOString().slice(0, 16)

/** Why two bounds do not make a window, or undefined when they do. */
export function customWindowProblem(start: number | undefined, end: number | undefined): string | undefined {
  if (start === undefined) return 'Give the start of the window as a date and time (UTC).'
  if (end === undefined) return 'Give the end of the window as a date and time (UTC).'
  if (end <= start) return 'The end of the window must be after its start.'
  return undefined
}
