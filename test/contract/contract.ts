import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import { readFileSync } from 'node:fs'
import type { Test } from 'tap'
import { parse } from 'yaml'
import type { App } from '../helper.js'
import { SseClient, type SseMessage } from '../sse.js'

export interface Operation {
  description?: string
  security?: Record<string, string[]>[]
  requestBody?: { content: Record<string, { schema: unknown }> }
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>
}
interface Document {
  info: { license?: { name: string; identifier?: string } }
  servers?: { url: string }[]
  paths: Record<string, Record<string, Operation>>
  components: { schemas: Record<string, unknown> }
}
export const document = parse(readFileSync('openapi.yaml', 'utf8')) as Document

// The committed document itself is the schema: responses are checked against what clients read.
const ajv = new Ajv2020({ strict: false, allErrors: true })
addFormats.default(ajv)
ajv.addSchema(document, 'openapi.yaml')

const templates = Object.keys(document.paths).map((template) => ({
  template,
  pattern: new RegExp('^' + template.replace(/\{[^}]+\}/g, '[^/]+') + '$')
}))

const pointer = (...segments: string[]) =>
  segments.map((segment) => segment.replaceAll('~', '~0').replaceAll('/', '~1')).join('/')

/** Every (path, method, status) the document declares, to prove the tests reach each of them. */
export const declared = new Set(
  Object.entries(document.paths).flatMap(([path, operations]) =>
    Object.entries(operations).flatMap(([method, operation]) =>
      Object.keys(operation.responses).map((status) => `${method.toUpperCase()} ${path} ${status}`)
    )
  )
)
export const exercised = new Set<string>()

/**
 * The first message of an event stream (requested with payloadAsStream), as the document models
 * one: its event name and its data parsed. `afterOpen` makes something happen that the stream tells.
 */
async function firstMessage(response: LightMyRequestResponse, afterOpen?: () => Promise<unknown>) {
  const client = new SseClient(response.stream())
  await client.until(() => client.comments.length > 0, 'the stream is open')
  await afterOpen?.()
  await client.until(() => client.messages.length > 0, 'a message')
  const [{ event, data }] = client.messages as [SseMessage]
  return { event, data: JSON.parse(data) as unknown }
}

/**
 * Sends a request and checks that its status is declared and its body matches the declared schema
 * (of an event stream, read with payloadAsStream: its first message).
 */
export async function call(
  t: Test,
  app: App,
  { afterOpen, ...options }: InjectOptions & { url: string; afterOpen?: () => Promise<unknown> }
): Promise<LightMyRequestResponse> {
  const response = await app.inject(options)
  const method = (options.method ?? 'GET').toString().toUpperCase()
  const path = options.url.split('?', 1)[0]!
  const template = templates.find(({ pattern }) => pattern.test(path))?.template
  const label = `${method} ${template ?? path} ${response.statusCode}`
  if (template === undefined) return (t.fail(`${path} is not in openapi.yaml`), response)
  const operation = document.paths[template]?.[method.toLowerCase()]
  if (operation?.responses[response.statusCode] === undefined) {
    t.fail(`${label} is not declared in openapi.yaml`)
    return response
  }
  exercised.add(label)
  const mediaType = String(response.headers['content-type']).split(';', 1)[0]!
  const validate = ajv.getSchema(
    'openapi.yaml#/' +
      pointer('paths', template, method.toLowerCase(), 'responses', String(response.statusCode), 'content', mediaType, 'schema')
  )
  if (validate === undefined) return (t.fail(`${label} declares no schema for ${mediaType}`), response)
  const body =
    mediaType === 'application/json' ? response.json() : mediaType === 'text/event-stream' ? await firstMessage(response, afterOpen) : response.body
  t.ok(validate(body), `${label} matches openapi.yaml`, { errors: validate.errors, body: response.body })
  return response
}
