import { InputError } from '../../domain/input-error.js'

/** Domain work on one part of the request: an InputError it throws gets the part in front of its field (`body[3].timestamp_utc ...`). */
export function fromRequest<T>(location: readonly [part: 'query' | 'path' | 'body', ...index: number[]], work: () => T): T {
  try {
    return work()
  } catch (error) {
    if (error instanceof InputError) throw new InputError([...location, ...error.field], error.reason)
    throw error
  }
}
