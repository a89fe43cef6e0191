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
const EVENT_STREAM = 'text/event-stream'

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
 * NDJSON and server-sent events are text on the wire: one item a line, or one message an event.
 * The schema of a body is the schema of the whole body, so a proxy that validates bodies must read
 * text. What each item is goes in the text's `contentSchema` (an annotation validators leave alone;
 * OpenAPI 3.2 would call it `itemSchema`). The server's own parser turns NDJSON into the array the
 * route validates; the stream's messages are written by the server one at a time.
 */
function itemsAsText(mediaType: string, itemSchema: unknown, description: string): MediaType {
  return { schema: { type: 'string', description, contentMediaType: mediaType, contentSchema: itemSchema } }
}

function ndjsonText(mediaType: MediaType): MediaType {
  const array = mediaType.schema ?? {}
  const most = typeof array.maxItems === 'number' ? ` (at most ${array.maxItems} lines)` : ''
  return itemsAsText(NDJSON, array.items, `Newline-delimited JSON: one object a line${most}, each as \`contentSchema\` describes it and as the JSON array's items are validated.`)
}

function eventStreamText(mediaType: MediaType): MediaType {
  return itemsAsText(EVENT_STREAM, mediaType.schema, 'Server-sent events, UTF-8: messages, each as `contentSchema` describes it, and comment lines.')
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
          const streamed = completed.responses['200']?.content?.[EVENT_STREAM]
          if (method !== 'head' && streamed !== undefined) {
            const ok = completed.responses['200']!
            completed = { ...completed, responses: { ...completed.responses, '200': { ...ok, content: { ...ok.content, [EVENT_STREAM]: eventStreamText(streamed) } } } }
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
