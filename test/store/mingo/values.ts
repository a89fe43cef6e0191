import { Double, Int32, Long, MongoServerError, type Document } from 'mongodb'

const SAFE_LONG_MAX = Long.fromNumber(Number.MAX_SAFE_INTEGER)
const SAFE_LONG_MIN = Long.fromNumber(Number.MIN_SAFE_INTEGER)

/**
 * A value as the driver hands it back with its default options: a fresh copy, BSON Int32 and
 * Double as numbers, Long as a number while it fits (promoteLongs keeps a Long beyond 2^53).
 * Documents are stored in this form too, so queries compare them as plain JavaScript values.
 */
export function asReturned(value: unknown): unknown {
  if (value instanceof Long) {
    return value.lessThanOrEqual(SAFE_LONG_MAX) && value.greaterThanOrEqual(SAFE_LONG_MIN) ? value.toNumber() : value
  }
  if (value instanceof Int32 || value instanceof Double) return value.valueOf()
  if (value instanceof Date) return new Date(value.getTime())
  if (Array.isArray(value)) return value.map(asReturned)
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, asReturned(item)]))
  }
  // Other BSON values (ObjectId, Decimal128 ...) are immutable: shared as they are.
  return value
}

export const copyOf = (document: Document) => asReturned(document) as Document

export const isOperatorDocument = (value: unknown) =>
  value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).some((key) => key.startsWith('$'))

/** An error shaped as the server's, with its code: what the adapter sees from a real server. */
export const serverError = (code: number, codeName: string, message: string, extra: Document = {}) =>
  new MongoServerError({ message, errmsg: message, code, codeName, ok: 0, ...extra })
