import { Double, Int32, Long, type Collection, type Document, type FindOptions } from 'mongodb'
import type { EventRecord } from '../../domain/records.js'

/**
 * A value read back as plain JavaScript: BSON Int32, Double and Long become numbers, at any depth. The driver's
 * promotion leaves few wrapped, but a Long beyond 2^53 is, and other programs write event_no and times as int32, int64.
 */
export function plain(value: unknown): unknown {
  if (value instanceof Long) return value.toNumber()
  if (value instanceof Int32 || value instanceof Double) return value.valueOf()
  if (Array.isArray(value)) return value.map(plain)
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, plain(item)]))
  return value
}

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

/** An event document, tolerant of those other programs wrote: a missing field reads as its empty value. */
export const toEvent = (document: Document): EventRecord => ({
  event_no: numberIn(document.event_no, 0),
  timestamp: millisIn(document.timestamp, 0),
  snr: numberIn(document.snr, 0),
  dm: document.dm === null || document.dm === undefined ? null : numberIn(document.dm, 0),
  known_source_name: typeof document.known_source_name === 'string' ? document.known_source_name : '',
  tsar_classification: typeof document.tsar_classification === 'string' ? document.tsar_classification : null,
  actions: (plain(document.actions) ?? { want: {}, got: {} }) as EventRecord['actions'],
  baseband_requested: document.baseband_requested === true,
  update_timestamp: numberIn(document.update_timestamp, 0)
})

/** The documents of these events; of one (the path of every single write) with findOne where a query gives one document. */
export async function documentsOf(collection: Pick<Collection, 'find' | 'findOne'>, eventNos: readonly number[], options: FindOptions): Promise<Document[]> {
  if (eventNos.length !== 1) return collection.find({ event_no: { $in: [...eventNos] } }, options).toArray()
  const document = await collection.findOne({ event_no: eventNos[0] }, options)
  return document === null ? [] : [document]
}
