import { Type, type Static } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { InputError } from './input-error.js'
import type { EventPageQuery, EventPosition } from './records.js'

const Integer = Type.Integer({ minimum: -1, maximum: Number.MAX_SAFE_INTEGER })

const CursorSchema = Type.Object({
  window: Type.Object({ start: Integer, end: Integer }),
  order: Type.Union([Type.Literal('asc'), Type.Literal('desc')]),
  after: Type.Object({ timestamp: Integer, event_no: Integer }),
  minSnr: Type.Optional(Type.Number()),
  maxSnr: Type.Optional(Type.Number()),
  knownSourceName: Type.Optional(Type.String()),
  basebandRequested: Type.Optional(Type.Boolean())
})
const isCursor = TypeCompiler.Compile(CursorSchema)

type Cursor = Static<typeof CursorSchema>

/** The cursor of the page after `last`: it fixes the window, so a default window does not slide while a client pages. */
export function encodeCursor(query: EventPageQuery, last: EventPosition): string {
  const { limit: _limit, after: _after, ...rest } = query
  const cursor: Cursor = { ...rest, after: { timestamp: last.timestamp, event_no: last.event_no } }
  return Buffer.from(JSON.stringify(cursor)).toString('base64url')
}

/** The query a cursor continues; its window is checked as if it had been given as parameters. */
export function decodeCursor(text: string, limit: number, maxWindowMs: number): EventPageQuery {
  let cursor: unknown
  try {
    cursor = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'))
  } catch {
    cursor = undefined
  }
  if (!isCursor.Check(cursor) || !windowHolds(cursor, maxWindowMs)) {
    throw new InputError(['cursor'], 'is not a cursor this service issued')
  }
  return { ...cursor, limit }
}

/** A window the service could have issued, and a position inside it: one outside would page through events outside the window. */
function windowHolds({ window, after }: Cursor, maxWindowMs: number): boolean {
  const windowValid = window.start < window.end && window.end - window.start <= maxWindowMs
  return windowValid && window.start <= after.timestamp && after.timestamp < window.end
}
