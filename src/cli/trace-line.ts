import { Type, type TSchema } from '@sinclair/typebox'
import { EventNoSchema } from '../../schemas/common.js'
import { updateTraceRequestSchema } from '../../schemas/trace.js'
import { InputError } from '../domain/input-error.js'
import { updatedKey } from '../domain/trace.js'
import type { BodyCheck } from '../infrastructure/http/body-validators.js'
import { CLASSIFICATION_STAGE, type Sites } from '../vocabulary.js'

/** A value the line holds, short: a short text quoted, anything else by its JSON type. */
const held = (value: unknown) =>
  typeof value === 'string' ? (value.length <= 64 ? JSON.stringify(value) : 'a long text') : value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : `a ${typeof value}`

const STAGE_KEY = /^stages\/(?:([^/]*)\/sites\/(.*)|(.*))$/s

/**
 * The fields of a trace document beside its stage keys, as the pipeline writes them to MongoDB: no
 * route takes a whole trace, and a read shows nothing else, so anything more is refused by name.
 */
const TraceFieldsSchema = Type.Object(
  {
    event_no: EventNoSchema,
    create_timestamp: Type.Optional(Type.Number({ minimum: 0 })),
    update_timestamp: Type.Optional(Type.Number({ minimum: 0 }))
  },
  { additionalProperties: false }
)

/**
 * A `"kind": "trace"` line held to what update-trace would take of it: each `stages/…` key read as
 * the stage, site and status of one update-trace body, checked by that route's schema and its rule
 * for sites, and written back to the very key the line holds. Undefined when the line is one the
 * API would store; else why not, naming the key.
 */
export function traceLineCheck(sites: Sites, checkOf: (schema: TSchema) => BodyCheck): (line: Record<string, unknown>) => string | undefined {
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
