import { Type } from '@sinclair/typebox'
import sjson from 'secure-json-parse'
import { EventNoSchema } from '../../schemas/common.js'
import { DatatrailMemberSchema, LargerDatasetSchema } from '../../schemas/datatrail.js'
import { actionFlagsSchema, actionsSchema, eventInputSchema, type EventInput } from '../../schemas/events.js'
import { HeartbeatReceivedSchema, heartbeatInputSchema, HeartbeatSentSchema, type HeartbeatInput } from '../../schemas/heartbeats.js'
import { toStoredEvent } from '../domain/events.js'
import { dataProducts } from '../domain/sites.js'
import { parseUtcTime } from '../domain/time-window.js'
import type { StoredTrace } from '../domain/trace.js'
import type { StoredDatatrail, StoredEvent } from '../store/port.js'
import { checker } from './typebox-checks.js'

/** One line of an import file, checked and ready for the store's bulk methods. */
export type ImportRecord =
  | { kind: 'event'; event: StoredEvent }
  | { kind: 'trace'; trace: StoredTrace }
  | { kind: 'datatrail'; item: StoredDatatrail }
  | { kind: 'heartbeat'; heartbeat: HeartbeatInput }

/** Why a line was refused; the caller adds the line number. */
export class RecordError extends Error {
  override name = 'RecordError'
}

const KINDS = 'trace, datatrail, heartbeat, or none for an event'

/**
 * Parses and checks lines against the schemas the HTTP routes use for the same records. `now` (s)
 * is the write time of the events and datatrail members.
 */
export function recordParser(sites: readonly string[], now: number): (line: string) => ImportRecord {
  const eventProblem = checker(eventInputSchema(sites), [actionsSchema(sites), actionFlagsSchema(sites)])
  const heartbeatProblem = checker(heartbeatInputSchema(sites), [HeartbeatSentSchema, HeartbeatReceivedSchema])
  const memberProblem = checker(DatatrailMemberSchema, [LargerDatasetSchema])
  const eventNoProblem = checker(Type.Object({ event_no: EventNoSchema }))
  const members = dataProducts(sites)
  const check = (problem: string | undefined) => {
    if (problem !== undefined) throw new RecordError(problem)
  }

  return (line) => {
    const record = parseObject(line)
    if (!Object.hasOwn(record, 'kind')) {
      check(eventProblem(record))
      const input = record as EventInput
      // The schema only bounds its length; the route's handler refuses what parseUtcTime cannot read.
      if (parseUtcTime(input.timestamp_utc) === undefined) {
        throw new RecordError('timestamp_utc must be a date YYYY-MM-DD or an ISO 8601 date-time')
      }
      return { kind: 'event', event: toStoredEvent(input, sites, now) }
    }
    const { kind, ...rest } = record
    switch (kind) {
      case 'trace':
        check(eventNoProblem(rest))
        return { kind, trace: rest }
      case 'datatrail': {
        const { event_no, member, ...value } = rest
        check(eventNoProblem({ event_no }))
        if (typeof member !== 'string' || !members.includes(member)) {
          throw new RecordError(`member must be one of ${members.join(', ')}`)
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
}

/** JSON as safely as the routes parse bodies: a __proto__ or constructor key is refused. */
function parseObject(line: string): Record<string, unknown> {
  let value: unknown
  try {
    value = sjson.parse(line, undefined, { protoAction: 'error', constructorAction: 'error' })
  } catch (error) {
    throw new RecordError(`not valid JSON (${error instanceof Error ? error.message : String(error)})`)
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new RecordError('not a JSON object')
  return value as Record<string, unknown>
}
