import {
  MongoBulkWriteError,
  MongoClientClosedError,
  MongoError,
  MongoNetworkError,
  MongoNotConnectedError,
  MongoOperationTimeoutError,
  MongoServerClosedError,
  MongoServerError,
  MongoServerSelectionError,
  MongoTopologyClosedError
} from 'mongodb'
import { StoreUnavailableError } from '../port.js'

/** What the driver throws while no server can be used (MongoNetworkError covers its timeout and a cleared pool): it reconnects by itself. */
const UNAVAILABLE_CLASSES = [
  MongoServerSelectionError,
  MongoNetworkError,
  MongoNotConnectedError,
  MongoTopologyClosedError,
  MongoClientClosedError,
  MongoServerClosedError,
  MongoOperationTimeoutError
]

/** Pool errors the driver does not export: a closed pool, or no connection free in time. */
const UNAVAILABLE_NAMES = new Set(['MongoPoolClosedError', 'MongoWaitQueueTimeoutError'])

/** Server codes of a replica set in transition or a node going away (no primary, shutdown, majority not confirmed in time). */
const UNAVAILABLE_CODES = new Set([6, 7, 64, 89, 91, 133, 189, 9001, 10058, 10107, 11600, 11602, 13435, 13436])

export function isUnavailable(error: unknown): boolean {
  if (!(error instanceof MongoError)) return false
  if (UNAVAILABLE_CLASSES.some((unavailable) => error instanceof unavailable)) return true
  if (UNAVAILABLE_NAMES.has(error.name)) return true
  return error instanceof MongoServerError && UNAVAILABLE_CODES.has(Number(error.code))
}

/** Maps every "database unreachable" error to StoreUnavailableError (503); others pass unchanged. */
export function asStoreError(error: unknown): unknown {
  if (error instanceof StoreUnavailableError || !isUnavailable(error)) return error
  return new StoreUnavailableError(`MongoDB store unavailable (${(error as Error).name})`, { cause: error })
}

const DUPLICATE_KEY = 11000

/** E11000: a unique index refused the write, as two upserts of one new key racing do; a bulk write reports it per operation. */
export function isDuplicateKey(error: unknown): boolean {
  if (error instanceof MongoBulkWriteError) {
    const writeErrors = [error.writeErrors].flat()
    return writeErrors.length > 0 && writeErrors.every((writeError) => writeError.code === DUPLICATE_KEY)
  }
  return error instanceof MongoServerError && Number(error.code) === DUPLICATE_KEY
}

/** Runs `write` again once when a racing upsert made it fail on a unique index: now it updates. */
export async function retryOnDuplicateKey<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write()
  } catch (error) {
    if (!isDuplicateKey(error)) throw error
    return write()
  }
}
