// What the document says beyond the route schemas, applied once when @fastify/swagger builds it.

type MediaType = { schema?: Record<string, unknown>; [key: string]: unknown }
type Response = { description?: string; content?: Record<string, MediaType>; headers?: Record<string, unknown>; $ref?: string }
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

// Refusals Node's HTTP parser makes before any route is chosen (client-errors.ts): any operation may meet them.
const connectionRefusals = [
  { status: '408', name: 'RequestTimeout', response: envelope('RequestTimeout: the request did not arrive within REQUEST_TIMEOUT_MS; the connection is closed.') },
  { status: '431', name: 'RequestHeaderFieldsTooLarge', response: envelope("RequestHeaderFieldsTooLarge: the request headers are over Node's limit (16 KiB); the connection is closed.") }
] as const

const NDJSON = 'application/x-ndjson'
const EVENT_STREAM = 'text/event-stream'

/** HEAD answers what GET answers, without the body. */
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

// NDJSON and SSE are text on the wire, which a validating proxy reads: each item's schema is the annotation `contentSchema` (3.2's `itemSchema`).
const itemsAsText = (mediaType: string, contentSchema: unknown, description: string): MediaType => ({
  schema: { type: 'string', description, contentMediaType: mediaType, contentSchema }
})

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
            const array = content[NDJSON].schema ?? {}
            const most = typeof array.maxItems === 'number' ? ` (at most ${array.maxItems} lines)` : ''
            const text = itemsAsText(NDJSON, array.items, `Newline-delimited JSON: one object a line${most}, each as \`contentSchema\` describes it and as the JSON array's items are validated.`)
            completed = { ...completed, requestBody: { ...completed.requestBody, content: { ...content, [NDJSON]: text } } }
          }
          const ok = completed.responses['200']
          const streamed = ok?.content?.[EVENT_STREAM]
          if (method !== 'head' && streamed !== undefined) {
            const text = itemsAsText(EVENT_STREAM, streamed.schema, 'Server-sent events, UTF-8: messages, each as `contentSchema` describes it, and comment lines.')
            completed = { ...completed, responses: { ...completed.responses, '200': { ...ok, content: { ...ok!.content, [EVENT_STREAM]: text } } } }
          }
          const sorted = Object.fromEntries(Object.entries({ ...completed.responses, ...refusals }).sort(([a], [b]) => a.localeCompare(b)))
          return [method, { ...completed, responses: sorted }]
        })
      )
    ])
  )
  return { ...document, paths, components: { ...document.components, responses } }
}
