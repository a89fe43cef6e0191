import { Double, Int32, Long, type Document } from 'mongodb'

/**
 * A value read back as plain JavaScript: BSON Int32, Double and Long become numbers, at any depth.
 * With the driver's default promotion they rarely arrive wrapped, but a Long beyond 2^53 does, and
 * other programs write event_no and timestamps as int32, int64 or double.
 */
export function plain(value: unknown): unknown {
  if (value instanceof Long) return value.toNumber()
  if (value instanceof Int32 || value instanceof Double) return value.valueOf()
  if (Array.isArray(value)) return value.map(plain)
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, plain(item)]))
  return value
}

/** A document read with WITHOUT_ID, as plain JavaScript. */
export const plainDocument = (document: Document) => plain(document) as Record<string, unknown>

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype

/** Reads that return whole documents leave `_id` at the server: it never reaches the port. */
export const WITHOUT_ID = { projection: { _id: 0 } } as const

/** A number stored by any writer (int32, int64, double, or promoted), or the fallback. */
export function numberIn(value: unknown, fallback: number): number {
  const converted = plain(value)
  return typeof converted === 'number' && Number.isFinite(converted) ? converted : fallback
}

/** A time stored as a BSON date; a number is taken as milliseconds, as another writer may have. */
export function millisIn(value: unknown, fallback: number): number {
  return value instanceof Date ? value.getTime() : numberIn(value, fallback)
}
