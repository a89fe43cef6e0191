import { Type, type TSchema } from '@sinclair/typebox'
import { parseStrictJson } from '../domain/strict-json.js'
import { EventNoSchema } from '../../schemas/common.js'
import { DatatrailMemberSchema } from '../../schemas/datatrail.js'
import { eventInputSchema, type EventInput } from '../../schemas/events.js'
import { heartbeatInputSchema, type HeartbeatInput } from '../../schemas/heartbeats.js'
import { updateTraceRequestSchema } from '../../schemas/trace.js'
import { toEventRecord } from '../domain/events.js'
import { fieldText, InputError } from '../domain/input-error.js'
import type { DatatrailRecord, EventRecord, TraceRecord } from '../domain/records.js'
import { updatedKey } from '../domain/trace.js'
import { bodyChecks, type BodyCheck } from '../infrastructure/http/body-validators.js'
import { CLASSIFICATION_STAGE, type Sites } from '../vocabulary.js'

/** The records of an import file by the bulk method that writes them. */
export interface ImportLists {
  events: EventRecord[]
  traces: TraceRecord[]
  datatrail: DatatrailRecord[]
  heartbeats: HeartbeatInput[]
}

/** One line of an import file, checked and ready for the store's bulk methods. */
export type ImportRecord = { [K in keyof ImportLists]: { kind: K; record: ImportLists[K][number] } }[keyof ImportLists]

/** Why a line was refused; the caller adds the line number. */
export class RecordError extends Error {
  override name = 'RecordError'
}

const KINDS = 'trace, datatrail, heartbeat, or none for an event'

/** Parses and checks lines as the HTTP routes check the same records. `now` (s) is the write time of the events and datatrail members. */
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
      return { kind: 'events', record: toEventRecord(record as EventInput, sites, now) }
    }
    const { kind, ...rest } = record
    switch (kind) {
      case 'trace':
        check(traceProblem(rest))
        return { kind: 'traces', record: rest }
      case 'datatrail': {
        const { event_no, member, ...value } = rest
        check(eventNoProblem({ event_no }))
        if (typeof member !== 'string' || !sites.dataProducts.includes(member)) {
          throw new RecordError(`member must be one of ${sites.dataProducts.join(', ')}`)
        }
        check(memberProblem(value))
        return { kind: 'datatrail', record: { event_no: event_no as number, member, value, update_timestamp: now } }
      }
      case 'heartbeat':
        check(heartbeatProblem(rest))
        return { kind: 'heartbeats', record: rest as HeartbeatInput }
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

/** A value the line holds, short: a short text quoted, anything else by its JSON type. */
const held = (value: unknown) =>
  typeof value === 'string' ? (value.length <= 64 ? JSON.stringify(value) : 'a long text') : value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : `a ${typeof value}`

const STAGE_KEY = /^stages\/(?:([^/]*)\/sites\/(.*)|(.*))$/s

/** The fields of a trace beside its stage keys, as the pipeline writes them: no route shows anything else, so more is refused by name. */
const TraceFieldsSchema = Type.Object(
  {
    event_no: EventNoSchema,
    create_timestamp: Type.Optional(Type.Number({ minimum: 0 })),
    update_timestamp: Type.Optional(Type.Number({ minimum: 0 }))
  },
  { additionalProperties: false }
)

/**
 * A `"kind": "trace"` line held to update-trace: each `stages/…` key read as one update-trace body,
 * checked as the route checks it and written back to that very key; else why not, naming the key.
 */
function traceLineCheck(sites: Sites, checkOf: (schema: TSchema) => BodyCheck): (line: Record<string, unknown>) => string | undefined {
  const fieldsProblem = checkOf(TraceFieldsSchema)
  const updateProblem = checkOf(updateTraceRequestSchema(sites))
  const keyProblem = (key: string, value: unknown, eventNo: unknown): string | undefined => {
    const [, stage, site, classification] = STAGE_KEY.exec(key)!
    // The classification has no site; update-trace takes any and ignores it.
    const body = { event: eventNo, stage: stage ?? classification, site: site ?? sites.names[0], status: value }
    const problem = updateProblem(body)
    if (problem !== undefined) return `${key}: ${problem}${problem.startsWith('status ') ? ` (the line holds ${held(value)})` : ''}`
    try {
      if (updatedKey(body.stage as typeof CLASSIFICATION_STAGE, body.site!, sites) === key) return undefined
    } catch (error) {
      if (error instanceof InputError) return `${key}: site ${error.reason}`
      throw error
    }
    return `${key} is not a trace key (stages/${CLASSIFICATION_STAGE} or stages/{stage}/sites/{site})`
  }
  return (line) => {
    const fields = Object.fromEntries(Object.entries(line).filter(([key]) => !key.startsWith('stages/')))
    const problem = fieldsProblem(fields)
    if (problem !== undefined) return problem
    for (const [key, value] of Object.entries(line)) {
      if (!key.startsWith('stages/')) continue
      const found = keyProblem(key, value, line.event_no)
      if (found !== undefined) return found
    }
    return undefined
  }
}
