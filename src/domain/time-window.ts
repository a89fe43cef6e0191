import { InputError } from './input-error.js'

/** A half-open window `start <= t < end`, in milliseconds since the epoch. */
export interface TimeWindow {
  start: number
  end: number
}

export const DAY_MS = 86_400_000

// YYYY-MM-DD, optionally followed by T or one space (Python's str(datetime)), HH:MM[:SS[.f{1,9}]]
// and Z, ±HH:MM (hours 00-23, minutes 00-59) or nothing (UTC).
const FORMAT =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)?)?$/

/**
 * Milliseconds since the epoch for one of the accepted forms (schemas/common.ts says which), or undefined
 * when the text is not one of them or names an impossible date or time (`2024-02-30`, `25:00`).
 */
export function parseUtcTime(text: string): number | undefined {
  const match = FORMAT.exec(text)
  if (match === null) return undefined
  const [, year, month, day, hour = '00', minute = '00', second = '00', fraction = '', zone = 'Z'] = match
  const fields = [year, month, day, hour, minute, second].map(Number) as [number, number, number, number, number, number]
  const [y, mo, d, h, mi, s] = fields
  const millis = Number(fraction.padEnd(3, '0').slice(0, 3))
  const local = Date.UTC(y, mo - 1, d, h, mi, s, millis)
  // Date.UTC rolls over (Feb 30 becomes Mar 1); a real date reads back the same fields.
  const check = new Date(local)
  if (
    check.getUTCFullYear() !== y ||
    check.getUTCMonth() !== mo - 1 ||
    check.getUTCDate() !== d ||
    h > 23 ||
    mi > 59 ||
    s > 59
  ) {
    return undefined
  }
  return local - zoneOffsetMs(zone)
}

function zoneOffsetMs(zone: string): number {
  if (zone === 'Z') return 0
  const sign = zone.startsWith('-') ? -1 : 1
  const [hours, minutes] = zone.slice(1).split(':').map(Number) as [number, number]
  return sign * (hours * 60 + minutes) * 60_000
}

/** The reason a time is refused, the same for every field that holds one. */
export const NOT_A_TIME = 'must be a date YYYY-MM-DD or an ISO 8601 date-time'

function parseParameter(name: string, text: string): number {
  const time = parseUtcTime(text)
  if (time === undefined) throw new InputError([name], `${NOT_A_TIME} (got ${JSON.stringify(text)})`)
  return time
}

/** Checks the window's order and length; names `end_time_utc`, the bound that makes it wrong. */
function checked(window: TimeWindow, maxDays: number): TimeWindow {
  if (window.end <= window.start) throw new InputError(['end_time_utc'], 'must be later than start_time_utc')
  if (window.end - window.start > maxDays * DAY_MS) {
    throw new InputError(['end_time_utc'], `is more than ${maxDays} days after start_time_utc`)
  }
  return window
}

export interface WindowQuery {
  start_time_utc?: string
  end_time_utc?: string
}

/** Both bounds are required (baseband-callbacks). */
export function requiredWindow(query: Required<WindowQuery>, maxDays: number): TimeWindow {
  return checked(
    { start: parseParameter('start_time_utc', query.start_time_utc), end: parseParameter('end_time_utc', query.end_time_utc) },
    maxDays
  )
}

/**
 * Bounds are optional (/v1/events): neither means the last 7 days; only a start runs up to now;
 * only an end means the 7 days before it.
 */
export function optionalWindow(query: WindowQuery, maxDays: number, now = Date.now()): TimeWindow {
  const start = query.start_time_utc === undefined ? undefined : parseParameter('start_time_utc', query.start_time_utc)
  const end = query.end_time_utc === undefined ? undefined : parseParameter('end_time_utc', query.end_time_utc)
  if (start === undefined && end === undefined) return checked({ start: now - 7 * DAY_MS, end: now }, maxDays)
  if (start === undefined) return checked({ start: end! - 7 * DAY_MS, end: end! }, maxDays)
  if (end === undefined) {
    if (start >= now) throw new InputError(['start_time_utc'], 'is in the future; give end_time_utc too')
    return checked({ start, end: now }, maxDays)
  }
  return checked({ start, end }, maxDays)
}

export const toIsoUtc = (ms: number) => new Date(ms).toISOString()
