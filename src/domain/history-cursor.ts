import { Type } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { InputError } from './input-error.js'
import type { HistoryPosition } from './records.js'

const AfterSchema = Type.Object({
  event_no: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
  at: Type.Number(),
  written: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })
})
const isAfter = TypeCompiler.Compile(AfterSchema)

/** The `after` of the read that continues event `eventNo`'s history past `position`: opaque to clients. */
export function encodeHistoryAfter(eventNo: number, position: HistoryPosition): string {
  return Buffer.from(JSON.stringify({ event_no: eventNo, at: position.at, written: position.written })).toString('base64url')
}

/** The position an `after` names; one the service did not give for this event is refused. */
export function decodeHistoryAfter(text: string, eventNo: number): HistoryPosition {
  let after: unknown
  try {
    after = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'))
  } catch {
    after = undefined
  }
  // Only the one spelling the service writes: base64url passes over stray characters, and JSON has many spellings of one value.
  if (!isAfter.Check(after) || after.event_no !== eventNo || encodeHistoryAfter(eventNo, after) !== text) {
    throw new InputError(['after'], `is not a position this service gave in the history of event ${eventNo}`)
  }
  return { at: after.at, written: after.written }
}
