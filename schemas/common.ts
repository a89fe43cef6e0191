import { Type, type SchemaOptions, type Static, type TSchema } from '@sinclair/typebox'

/** A `$ref` to a shared schema, keeping its static type: openapi.yaml names the component instead of inlining it. */
export function ref<T extends TSchema>(schema: T, options: SchemaOptions = {}) {
  if (schema.$id === undefined) throw new Error('ref() needs a schema with an $id')
  return Type.Unsafe<Static<T>>(Type.Ref(schema.$id, options))
}

/** A string enumeration rendered as `enum` (TypeBox unions of literals would render as `anyOf`). */
export function StringEnum<const T extends readonly string[]>(values: T, options: object = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options })
}

export const exceptions = [
  'BadRequest',
  'Unauthorized',
  'InvalidToken',
  'AuthenticationFailed',
  'Forbidden',
  'NotFound',
  'MethodNotAllowed',
  'RequestTimeout',
  'PayloadTooLarge',
  'UnsupportedMediaType',
  'TooManyRequests',
  'RequestHeaderFieldsTooLarge',
  'InternalError',
  'ServiceUnavailable'
] as const

export const ExceptionSchema = StringEnum(exceptions, { $id: 'Exception', description: 'Machine-readable name of the error.' })
export type Exception = Static<typeof ExceptionSchema>

export const ErrorEnvelopeSchema = Type.Object(
  { reasons: Type.Array(Type.String(), { description: 'Human-readable reasons, at least one.' }), exception: ref(ExceptionSchema) },
  { $id: 'ErrorEnvelope', description: 'Body of every non-2xx response.', additionalProperties: false }
)
export type ErrorEnvelope = Static<typeof ErrorEnvelopeSchema>

const errorDescriptions = {
  400: 'BadRequest: malformed JSON, or a field that breaks the schema (named in `reasons`).',
  401: 'Unauthorized (no Authorization header), InvalidToken or AuthenticationFailed.',
  403: 'Forbidden: the role of the token\'s user may not do this.',
  404: 'NotFound: no such route or `event_no`.',
  413: 'PayloadTooLarge: the body is over the limit.',
  415: 'UnsupportedMediaType: send `application/json`.',
  429: 'TooManyRequests: wait `Retry-After` seconds.',
  503: 'ServiceUnavailable: the store is unreachable; wait `Retry-After` seconds, the service recovers by itself.'
} as const

/** The envelope of an error status; every 429 and 503 carries `Retry-After`. */
export function errorResponse(status: number, description: string) {
  const retryLater = status === 429 || status === 503
  return ref(ErrorEnvelopeSchema, {
    description,
    ...(retryLater ? { headers: { 'Retry-After': Type.Integer({ minimum: 1, description: 'Seconds to wait before trying again.' }) } } : {})
  })
}

/** Response entries for the error statuses a route can produce, all with the one envelope. */
export function errorResponses<const S extends readonly (keyof typeof errorDescriptions)[]>(...statuses: S) {
  return Object.fromEntries(statuses.map((status) => [status, errorResponse(status, errorDescriptions[status])])) as {
    [K in S[number]]: ReturnType<typeof ref<typeof ErrorEnvelopeSchema>>
  }
}

/** The refusals of a window report (baseband callbacks, the audit of a window, stage latency), beside the common ones. */
export const windowReportRefusals = {
  429: errorResponse(
    429,
    'TooManyRequests: the user, or the client address, holds MAX_STREAMED_RESPONSES_PER_CLIENT window reports of this instance ' +
      'already; wait `Retry-After` seconds.'
  ),
  503: errorResponse(
    503,
    'ServiceUnavailable: the store is unreachable, or MAX_STREAMED_RESPONSES window reports are in flight in this instance; ' +
      'wait `Retry-After` seconds, the service recovers by itself.'
  )
}

/** The time forms of windows and event times, as parseUtcTime reads them. */
export const TIME_FORMAT_DESCRIPTION =
  'UTC date `YYYY-MM-DD` (midnight), or ISO 8601 date-time `YYYY-MM-DDTHH:MM[:SS[.fff]]` (a space may ' +
  'replace the `T`, as Python writes it) with `Z`, a `±HH:MM` offset (hours 00-23, minutes 00-59), or no ' +
  'zone (UTC). Fractions beyond milliseconds are dropped.'

/** Every event number, wherever it is written: from 0 to 2^53-1, which a double holds exactly. */
export const EVENT_NO_BOUNDS = { minimum: 0, maximum: Number.MAX_SAFE_INTEGER } as const

export const EventNoSchema = Type.Integer({ ...EVENT_NO_BOUNDS, description: 'Event number: an integer from 0 to 2^53-1.' })

/**
 * An event number in a path or a query: the same integer type as in a body, for generated clients. The URL
 * validator (schema-compilers.ts) takes plain decimal digits only, so "0x10", "1e3", "01" and "12.0" stay 400s.
 */
export const EventNoPathSchema = Type.Integer({ ...EVENT_NO_BOUNDS, description: 'Event number: an integer from 0 to 2^53-1, in decimal.' })

/** Most items one read of a list about one event gives; the rest are read in further parts. */
export const PART_LIMIT = 1000

/** How many items a part holds: at most PART_LIMIT, all of them by default. */
export const PartLimitSchema = Type.Integer({ minimum: 1, maximum: PART_LIMIT, default: PART_LIMIT, description: 'At most this many items.' })

/** The response headers of a read that may give only part of a longer list. */
export const partHeaders = (total?: { header: string; of: string }) => ({
  ...(total === undefined ? {} : { [total.header]: Type.Integer({ description: `How many ${total.of} there are in all.` }) }),
  Link: Type.String({ description: 'Only when more follow: `<{path and query}>; rel="next"`, the read that gives the next part.' })
})

/** The path parameters of the routes about one event. */
export const EventNoParamsSchema = Type.Object({ event_no: EventNoPathSchema })

export const StatusTrueSchema = Type.Object(
  { status: Type.Literal(true) },
  { $id: 'StatusTrue', description: 'What the Python trace updater expects.', additionalProperties: false }
)

/** The security requirement of routes that need an access token (a fresh array: no YAML aliases). */
export const tokenSecurity = () => [{ accessToken: [] }]

/** What every route of a group that needs a token documents alike (fresh objects: no YAML aliases). */
export const tokenRoute = (tag: string) => ({ tags: [tag], security: tokenSecurity() })

/** The security requirement of routes anyone may call: none, said explicitly. */
export const noSecurity = (): [] => []
