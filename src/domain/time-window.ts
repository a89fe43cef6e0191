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

/** The instants of years 0000 to 9999 in UTC: what the service writes back (toIsoUtc) must be a time it accepts again. */
export const EARLIEST_TIME = -62_167_219_200_000
export const LATEST_TIME = 253_402_300_799_999

/** A time read from text, or why not (`outside`: a well-formed time beyond the years 0000 to 9999). */
export type TimeReading = { time: number } | { refused: string; outside: boolean }

export const NOT_A_TIME = 'must be a date YYYY-MM-DD or an ISO 8601 date-time'

/** Milliseconds since the epoch for an accepted form (schemas/common.ts), or why not: another form, an impossible date, or beyond 0000 to 9999. */
export function readUtcTime(text: string): TimeReading {
  const match = FORMAT.exec(text)
  const refused = { refused: `${NOT_A_TIME} (got ${JSON.stringify(text)})`, outside: false }
  if (match === null) return refused
  const [, year, month, day, hour = '00', minute = '00', second = '00', fraction = '', zone = 'Z'] = match
  const fields = [year, month, day, hour, minute, second].map(Number) as [number, number, number, number, number, number]
  const [y, mo, d, h, mi, s] = fields
  const millis = Number(fraction.padEnd(3, '0').slice(0, 3))
  // setUTCFullYear, not Date.UTC, which reads the years 0 to 99 as 1900 to 1999.
  const date = new Date(0)
  date.setUTCFullYear(y, mo - 1, d)
  date.setUTCHours(h, mi, s, millis)
  // A real date reads back the same fields (Feb 30 rolls over to Mar 1).
  if (date.getUTCFullYear() !== y || date.getUTCMonth() !== mo - 1 || date.getUTCDate() !== d || h > 23 || mi > 59 || s > 59) {
    return refused
  }
  const time = date.getTime() - zoneOffsetMs(zone)
  if (time < EARLIEST_TIME || time > LATEST_TIME) {
    return {
      refused:
        `names an instant outside the years 0000 to 9999 in UTC (${new Date(time).toISOString()}), ` +
        `which could not be written back as an RFC 3339 time (got ${JSON.stringify(text)})`,
      outside: true
    }
  }
  return { time }
}

export function parseUtcTime(text: string): number | undefined {
  const reading = readUtcTime(text)
  return 'time' in reading ? reading.time : undefined
}

function zoneOffsetMs(zone: string): number {
  if (zone === 'Z') return 0
  const sign = zone.startsWith('-') ? -1 : 1
  const [hours, minutes] = zone.slice(1).split(':').map(Number) as [number, number]
  return sign * (hours * 60 + minutes) * 60_000
}

function parseParameter(name: string, text: string): number {
  const reading = readUtcTime(text)
  if ('refused' in reading) throw new InputError([name], reading.refused)
  return reading.time
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

export function requiredWindow(query: Required<WindowQuery>, maxDays: number): TimeWindow {
  return checked(
    { start: parseParameter('start_time_utc', query.start_time_utc), end: parseParameter('end_time_utc', query.end_time_utc) },
    maxDays
  )
}

/** Optional bounds (/v1/events): neither means the last 7 days; a start alone runs up to now; an end alone, the 7 days before it. */
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
