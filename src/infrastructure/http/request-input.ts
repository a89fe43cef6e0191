import { InputError } from '../../domain/input-error.js'

/** Where in a request a value came from, as reasons name it: `query`, `path`, `body`, `body[3]`. */
export type InputLocation = readonly [part: 'query' | 'path' | 'body', ...index: number[]]

/**
 * Runs domain work on values read from one part of the request. An InputError it throws gets that
 * part in front of its field, so the 400 says `query.end_time_utc ...` or `body[3].timestamp_utc ...`.
 */
export function fromRequest<T>(location: InputLocation, work: () => T): T {
  try {
    return work()
  } catch (error) {
    if (error instanceof InputError) throw new InputError([...location, ...error.field], error.reason)
    throw error
  }
}
