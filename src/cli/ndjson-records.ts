import { Type } from '@sinclair/typebox'
import { parseStrictJson } from '../domain/strict-json.js'
import { EventNoSchema } from '../../schemas/common.js'
import { DatatrailMemberSchema } from '../../schemas/datatrail.js'
import { eventInputSchema, type EventInput } from '../../schemas/events.js'
import { heartbeatInputSchema, type HeartbeatInput } from '../../schemas/heartbeats.js'
import { toEventRecord } from '../domain/events.js'
import { fieldText, InputError } from '../domain/input-error.js'
import type { DatatrailRecord, EventRecord, TraceRecord } from '../domain/records.js'
import { bodyChecks } from '../infrastructure/http/body-validators.js'
import type { Sites } from '../vocabulary.js'
import { traceLineCheck } from './trace-line.js'

/** One line of an import file, checked and ready for the store's bulk methods. */
export type ImportRecord =
  | { kind: 'event'; event: EventRecord }
  | { kind: 'trace'; trace: TraceRecord }
  | { kind: 'datatrail'; item: DatatrailRecord }
  | { kind: 'heartbeat'; heartbeat: HeartbeatInput }

/** Why a line was refused; the caller adds the line number. */
export class RecordError extends Error {
  override name = 'RecordError'
}

const KINDS = 'trace, datatrail, heartbeat, or none for an event'

/**
 * Parses and checks lines with the validators and domain rules the HTTP routes apply to the same
 * records. `now` (s) is the write time of the events and datatrail members.
 */
export function recordParser(sites: Sites, now: number): (line: string) => ImportRecord {
  const checkOf = bodyChecks(sites)
  const eventProblem = checkOf(eventInputSchema(sites))
  const heartbeatProblem = checkOf(heartbeatInputSchema(sites))
  const memberProblem = checkOf(DatatrailMemberSchema)
  const eventNoProblem = checkOf(Type.Object({ event_no: EventNoSchema }))
  const traceProblem = traceLineCheck(sites, checkOf)
  const check = (problem: string | undefined) => {
    if (problem !== undefined) throw new RecordError(problem)
  }

  const parse = (record: Record<string, unknown>): ImportRecord => {
    if (!Object.hasOwn(record, 'kind')) {
      check(eventProblem(record))
      return { kind: 'event', event: toEventRecord(record as EventInput, sites, now) }
    }
    const { kind, ...rest } = record
    switch (kind) {
      case 'trace':
        check(traceProblem(rest))
        return { kind, trace: rest }
      case 'datatrail': {
        const { event_no, member, ...value } = rest
        check(eventNoProblem({ event_no }))
        if (typeof member !== 'string' || !sites.dataProducts.includes(member)) {
          throw new RecordError(`member must be one of ${sites.dataProducts.join(', ')}`)
        }
        check(memberProblem(value))
        return { kind, item: { event_no: event_no as number, member, value, update_timestamp: now } }
      }
      case 'heartbeat':
        check(heartbeatProblem(rest))
        return { kind, heartbeat: rest as HeartbeatInput }
      default:
        throw new RecordError(`kind ${JSON.stringify(kind)} is not one of ${KINDS}`)
    }
  }

  return (line) => {
    try {
      return parse(parseObject(line))
    } catch (error) {
      // A domain rule the schema cannot say (a time that is not one), worded for a line of a file.
      if (error instanceof InputError) throw new RecordError(`${fieldText(error.field)} ${error.reason}`)
      throw error
    }
  }
}

/** C0 control characters: JSON allows tab and CR as whitespace between tokens, the others nowhere (DEL and C1 may be in strings). */
const CONTROL = /(?![\t\r\u007f-\u009f])\p{Cc}/u

/** JSON read as strictly as the routes read bodies (see strict-json.ts). */
function parseObject(line: string): Record<string, unknown> {
  let value: unknown
  try {
    value = parseStrictJson(line)
  } catch (error) {
    if (error instanceof InputError) throw new RecordError(`${error.field.length === 0 ? 'the record' : fieldText(error.field)} ${error.reason}`)
    // Raw control characters (NUL, ESC ...) are never JSON text, and quoting them would garble the terminal.
    const control = CONTROL.exec(line)
    if (control !== null) {
      const code = control[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')
      throw new RecordError(`not JSON text: it holds the control character U+${code} (column ${control.index + 1}); is this an NDJSON file?`)
    }
    throw new RecordError(`not valid JSON (${error instanceof Error ? error.message : String(error)})`)
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new RecordError('not a JSON object')
  return value as Record<string, unknown>
}
