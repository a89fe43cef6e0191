import { Type } from '@sinclair/typebox'
import { CLASSIFICATION_STAGE, STAGES, STATUSES, WRITTEN_STATUSES, type Sites } from '../src/vocabulary.js'
import { EventNoSchema, ref, StringEnum, TIME_FORMAT_DESCRIPTION } from './common.js'

export const StageStatusSchema = StringEnum(STATUSES, {
  $id: 'StageStatus',
  description: 'A stored `not_required` reads `complete`; a missing key reads `incomplete`.'
})

/** The trace object: flat slash keys built from the configured sites and the four stages. */
export const traceSchema = (sites: Sites) =>
  Type.Object(
    {
      event_no: EventNoSchema,
      ...Object.fromEntries(sites.traceKeys.map((key) => [key, ref(StageStatusSchema)])),
      update_timestamp: Type.Number({ description: 'Seconds since the epoch of the last update; 0 when none is stored.' })
    },
    { $id: 'Trace', additionalProperties: false }
  )

export const createTraceRequestSchema = (sites: Sites) =>
  Type.Object(
    { event: EventNoSchema, site: StringEnum(sites.names, { description: 'A configured site; it has no other effect.' }) },
    { $id: 'CreateTraceRequest', additionalProperties: false }
  )

export const updateTraceRequestSchema = (sites: Sites) =>
  Type.Object(
    {
      event: EventNoSchema,
      site: Type.String({
        minLength: 1,
        maxLength: 64,
        description: `One of ${sites.names.join(', ')}; ignored (any value) when stage is ${CLASSIFICATION_STAGE}.`
      }),
      stage: StringEnum([CLASSIFICATION_STAGE, ...STAGES]),
      status: StringEnum(WRITTEN_STATUSES, {
        description: 'Stored as given; `not_required` reads `complete` (nothing is pending), and history and the stream show it as stored.'
      })
    },
    { $id: 'UpdateTraceRequest', additionalProperties: false }
  )

export const CallbackQuerySchema = Type.Object({
  start_time_utc: Type.String({ description: `Start of the window (inclusive): ${TIME_FORMAT_DESCRIPTION}` }),
  end_time_utc: Type.String({ description: 'End of the window (exclusive), at most MAX_WINDOW_DAYS (366) after the start.' })
})

export const basebandCallbackSchema = (sites: Sites) =>
  Type.Object(
    {
      event_no: EventNoSchema,
      snr: Type.Number(),
      known_source_name: Type.String(),
      timestamp_utc: Type.String({ format: 'date-time', description: 'Event time, ISO 8601 UTC.' }),
      trace: Type.Optional(ref(traceSchema(sites), { description: 'Omitted when no trace is stored.' }))
    },
    { $id: 'BasebandCallback', additionalProperties: false }
  )
