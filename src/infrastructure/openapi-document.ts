/**
 * What the document says beyond the route schemas: facts of the HTTP layer that hold for every
 * operation, and the wire form of bodies that a parser turns into something else before validation.
 * Applied once, when @fastify/swagger builds the document.
 */

interface MediaType {
  schema?: Record<string, unknown>
  [key: string]: unknown
}
interface Response {
  description?: string
  content?: Record<string, MediaType>
  headers?: Record<string, unknown>
  $ref?: string
}
interface Operation {
  operationId?: string
  description?: string
  requestBody?: { content: Record<string, MediaType> }
  responses: Record<string, Response>
  [key: string]: unknown
}
export interface OpenApiDocument {
  paths?: Record<string, Record<string, Operation>>
  components?: { responses?: Record<string, Response>; [key: string]: unknown }
  [key: string]: unknown
}

const envelope = (description: string): Response => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } }
})

/**
 * Refusals that Node's HTTP parser makes before any route is chosen (client-errors.ts), so any
 * operation may meet them. Described once and referred to from every operation.
 */
export const connectionRefusals = [
  { status: '408', name: 'RequestTimeout', response: envelope('RequestTimeout: the request did not arrive within REQUEST_TIMEOUT_MS; the connection is closed.') },
  { status: '431', name: 'RequestHeaderFieldsTooLarge', response: envelope("RequestHeaderFieldsTooLarge: the request headers are over Node's limit (16 KiB); the connection is closed.") }
] as const

const NDJSON = 'application/x-ndjson'

/** HEAD answers what GET answers, headers only: the same statuses, no body. */
function headOperation(head: Operation, get: Operation | undefined): Operation {
  const responses = Object.fromEntries(
    Object.entries(head.responses).map(([status, { content: _content, ...response }]) => [status, response])
  )
  const getId = get?.operationId ?? head.operationId?.replace(/-head$/, '')
  return {
    ...head,
    ...(getId === undefined ? {} : { operationId: `${getId}Head` }),
    description: `The status and headers GET answers, without the body. ${head.description ?? ''}`.trim(),
    responses
  }
}

/**
 * NDJSON on the wire is text, one JSON value a line, which the server's parser turns into the array
 * the route validates. A proxy that validates requests reads the text: describe the text.
 */
function ndjsonText(mediaType: MediaType): MediaType {
  const array = mediaType.schema
  const items = (array?.items as { $ref?: string } | undefined)?.$ref?.split('/').pop()
  const most = typeof array?.maxItems === 'number' ? ` (at most ${array.maxItems} lines)` : ''
  return {
    schema: {
      type: 'string',
      minLength: 1,
      description: `Newline-delimited JSON: one ${items ?? 'record'} object a line${most}, each validated as the JSON array's items are.`
    }
  }
}

export function completeDocument(document: OpenApiDocument): OpenApiDocument {
  const responses = { ...document.components?.responses, ...Object.fromEntries(connectionRefusals.map(({ name, response }) => [name, response])) }
  const refusals = Object.fromEntries(connectionRefusals.map(({ status, name }) => [status, { $ref: `#/components/responses/${name}` }]))
  const paths = Object.fromEntries(
    Object.entries(document.paths ?? {}).map(([path, operations]) => [
      path,
      Object.fromEntries(
        Object.entries(operations).map(([method, operation]) => {
          let completed = method === 'head' ? headOperation(operation, operations.get) : operation
          const content = completed.requestBody?.content
          if (content?.[NDJSON] !== undefined) {
            completed = { ...completed, requestBody: { ...completed.requestBody, content: { ...content, [NDJSON]: ndjsonText(content[NDJSON]) } } }
          }
          return [method, { ...completed, responses: sortedByStatus({ ...completed.responses, ...refusals }) }]
        })
      )
    ])
  )
  return { ...document, paths, components: { ...document.components, responses } }
}

function sortedByStatus(responses: Record<string, Response>): Record<string, Response> {
  return Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)))
}
