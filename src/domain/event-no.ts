import { InputError } from './input-error.js'

/** The number an EventNoPathSchema string names; above 2^53-1 it could not be stored exactly. */
export function eventNoFromPath(text: string): number {
  const eventNo = Number(text)
  if (!Number.isSafeInteger(eventNo)) throw new InputError(['event_no'], 'must be at most 9007199254740991 (2^53-1)')
  return eventNo
}
