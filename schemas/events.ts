import { Type, type Static } from '@sinclair/typebox'
import type { Sites } from '../src/vocabulary.js'
import { EventNoSchema, ref, StringEnum, TIME_FORMAT_DESCRIPTION } from './common.js'

/** One optional flag per data product of the configured sites: the shape of `want` and of `got`. */
export const actionFlagsSchema = (sites: Sites) =>
  Type.Object(Object.fromEntries(sites.dataProducts.map((key) => [key, Type.Optional(Type.Boolean())])), {
    $id: 'ActionFlags',
    additionalProperties: false,
    description: 'A flag per data product; a product not named is not flagged.'
  })

export const actionsSchema = (sites: Sites) =>
  Type.Object(
    { want: ref(actionFlagsSchema(sites)), got: ref(actionFlagsSchema(sites)) },
    {
      $id: 'Actions',
      additionalProperties: false,
      description:
        'Requested (`want`) and received (`got`) data products: intensity data, baseband data, and baseband data per other site.'
    }
  )

export type Actions = Static<ReturnType<typeof actionsSchema>>

export const eventSchema = (sites: Sites) =>
  Type.Object(
    {
      event_no: EventNoSchema,
      timestamp_utc: Type.String({ format: 'date-time', description: 'Event time, ISO 8601 UTC.' }),
      snr: Type.Number({ description: 'Signal-to-noise ratio.' }),
      dm: Type.Union([Type.Number(), Type.Null()], { description: 'Dispersion measure, or null.' }),
      known_source_name: Type.String({ description: 'Known source, or the real-time pipeline category (EXT, AMB, GAL) when unknown.' }),
      tsar_classification: Type.String({ description: 'Classification; `unclassified` when none is stored.' }),
      actions: ref(actionsSchema(sites))
    },
    { $id: 'Event', additionalProperties: false }
  )

export const eventInputSchema = (sites: Sites) =>
  Type.Object(
    {
      event_no: EventNoSchema,
      timestamp_utc: Type.String({ minLength: 10, maxLength: 40, description: `Event time: ${TIME_FORMAT_DESCRIPTION}` }),
      snr: Type.Number({ minimum: -1e9, maximum: 1e9 }),
      known_source_name: Type.String({ minLength: 1, maxLength: 256 }),
      // No `default: null`: generated clients make a defaulted member required. Absent reads null.
      dm: Type.Optional(
        Type.Union([Type.Number({ minimum: -1e9, maximum: 1e9 }), Type.Null()], { description: 'Dispersion measure; null or absent when unknown.' })
      ),
      tsar_classification: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
      actions: Type.Optional(ref(actionsSchema(sites)))
    },
    { $id: 'EventInput', additionalProperties: false, description: 'An event to insert or replace (by event_no).' }
  )
export type EventInput = Static<ReturnType<typeof eventInputSchema>>

export const eventPageSchema = (sites: Sites) =>
  Type.Object(
    {
      events: Type.Array(ref(eventSchema(sites))),
      next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as `cursor` for the next page; null on the last.' })
    },
    { $id: 'EventPage', additionalProperties: false }
  )

export const EventQuerySchema = Type.Object({
  start_time_utc: Type.Optional(Type.String({ description: `Start of the window (inclusive). ${TIME_FORMAT_DESCRIPTION}` })),
  end_time_utc: Type.Optional(Type.String({ description: 'End of the window (exclusive). Neither bound: the last 7 days; only a start: up to now; only an end: the 7 days before it.' })),
  min_snr: Type.Optional(Type.Number({ description: 'Only events with at least this signal-to-noise ratio.' })),
  max_snr: Type.Optional(Type.Number({ description: 'Only events with at most this signal-to-noise ratio.' })),
  known_source_name: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'Only events of this known source, matched exactly.' })),
  baseband_requested: Type.Optional(Type.Boolean({ description: 'Only events whose actions.want asks (true) or does not ask (false) for baseband data.' })),
  order: Type.Optional(StringEnum(['desc', 'asc'] as const, { default: 'desc', description: 'By event time, then event_no.' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'Events a page.' })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, description: 'From `next_cursor`; it carries the window, filters and order of the first page, so those parameters are ignored; `limit` is not, and may change from page to page.' }))
})

/** The body of the Python client's batch read, `Events.get_event([...])`. */
export const EventBatchRequestSchema = Type.Object(
  { event_ids: Type.Array(EventNoSchema, { minItems: 1, maxItems: 1000, description: 'The event numbers to read; a number given twice is answered once.' }) },
  { $id: 'EventBatchRequest', additionalProperties: false }
)

/** An object, not an array: the client declares `Dict[str, dict]` and merges the answers of its chunks of 300 with `dict.update`. */
export const eventsByNumberSchema = (sites: Sites) =>
  // propertyNames rather than a Record's patternProperties, which the OpenAPI generator turns into additionalProperties and so loses the pattern.
  Type.Object(
    {},
    {
      $id: 'EventsByNumber',
      propertyNames: Type.String({ pattern: '^(0|[1-9][0-9]*)$', description: 'An event number, in decimal.' }),
      additionalProperties: ref(eventSchema(sites)),
      description: 'The events found, each under its event number, in the order asked, each once; an unknown number is left out (`{}` when none is known).'
    }
  )

export const UpsertResultSchema = Type.Object({ upserted: Type.Integer({ minimum: 0 }) }, { $id: 'UpsertResult', additionalProperties: false })
