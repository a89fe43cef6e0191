import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import { readFileSync } from 'node:fs'
import type { Test } from 'tap'
import { parse } from 'yaml'
import type { App } from '../helper.js'
import { SseClient, type SseMessage } from '../sse.js'
import { sendThroughPrism, throughPrism } from './prism.js'

export interface Operation {
  description?: string
  security?: Record<string, string[]>[]
  requestBody?: { content: Record<string, { schema: unknown }> }
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>
}
interface Document {
  info: { license?: { name: string; url?: string } }
  servers?: { url: string }[]
  paths: Record<string, Record<string, Operation>>
  components: { schemas: Record<string, unknown>; responses: Record<string, unknown> }
}
export const document = parse(readFileSync('openapi.yaml', 'utf8')) as Document

// The committed document itself is the schema: responses are checked against what clients read.
const ajv = new Ajv2020({ strict: false, allErrors: true })
addFormats.default(ajv)
ajv.addSchema(document, 'openapi.yaml')

// An event number is filled only by a segment written as a number: `/v1/events/get_events` is not
// a path of `/v1/events/{event_no}` (the service routes it so too: error-handler.ts).
const templates = Object.keys(document.paths).map((template) => ({
  template,
  pattern: new RegExp('^' + template.replace('{event_no}', '[+-]?[0-9][^/]*').replace(/\{[^}]+\}/g, '[^/]+') + '$')
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
/** Through Prism: how many requests went, and how many of them Prism found wrong (each one the service refused). */
export const prismTally = { requests: 0, refusedAsPrismExpected: 0 }

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
  // Each GET is asked again as HEAD (an open stream is asked for once by itself): the same status
  // and headers, no body.
  if (method === 'GET' && options.payloadAsStream !== true) await callHead(t, app, options, response)
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
  // A stream is checked a message at a time, against the schema of its items.
  const validate = ajv.getSchema(
    'openapi.yaml#/' +
      pointer('paths', template, method.toLowerCase(), 'responses', String(response.statusCode), 'content', mediaType, ...(mediaType === 'text/event-stream' ? ['schema', 'contentSchema'] : ['schema']))
  )
  if (validate === undefined) return (t.fail(`${label} declares no schema for ${mediaType}`), response)
  const body =
    mediaType === 'application/json' ? response.json() : mediaType === 'text/event-stream' ? await firstMessage(response, afterOpen) : response.body
  t.ok(validate(body), `${label} matches openapi.yaml`, { errors: validate.errors, body: response.body })
  // An open stream goes through Prism once by itself (openapi.ts): Prism holds it until it ends.
  if (throughPrism && options.payloadAsStream !== true) {
    const { status, violations } = await sendThroughPrism(t, app, options)
    prismTally.requests++
    if (violations.some(({ location }) => location?.[0] === 'request')) prismTally.refusedAsPrismExpected++
    const what = `${method} ${options.url.slice(0, 120)} through Prism (${status})`
    t.strictSame(violations.filter(({ location }) => location?.[0] !== 'request'), [], `${what}: the response breaks nothing`)
    // The suite sends bad requests on purpose: Prism may find one wrong only where the service refused it.
    if (status < 400 || status >= 500) t.strictSame(violations, [], `${what}: the request the service took breaks nothing`)
  }
  return response
}

/** HEAD after a GET: the status the GET got, declared for HEAD too, its content type and no body. */
export async function callHead(t: Test, app: App, options: InjectOptions & { url: string }, get?: LightMyRequestResponse) {
  const head = await app.inject({ ...options, method: 'HEAD' })
  const path = options.url.split('?', 1)[0]!
  const template = templates.find(({ pattern }) => pattern.test(path))?.template ?? path
  const label = `HEAD ${template} ${head.statusCode}`
  if (document.paths[template]?.head?.responses[head.statusCode] === undefined) return (t.fail(`${label} is not declared in openapi.yaml`), head)
  exercised.add(label)
  if (get !== undefined) {
    t.equal(head.statusCode, get.statusCode, `${label}: the status of GET`)
    t.equal(head.headers['content-type'], get.headers['content-type'], `${label}: the content type of GET`)
  }
  t.equal(head.body, '', `${label}: no body`)
  return head
}

/**
 * The refusals the document declares for every operation by reference (`#/components/responses/…`):
 * Node's HTTP parser answers them before a route is chosen, so one real answer of each stands for all.
 */
export function checkConnectionRefusal(t: Test, component: string, answer: { statusCode: number | undefined; headers: Record<string, string>; body: string }) {
  const validate = ajv.getSchema('openapi.yaml#/' + pointer('components', 'responses', component, 'content', 'application/json', 'schema'))
  if (validate === undefined) return t.fail(`openapi.yaml has no response ${component}`)
  t.match(answer.headers['content-type'], /^application\/json/, `${component}: the envelope's content type`)
  t.ok(validate(JSON.parse(answer.body)), `${component} matches openapi.yaml`, { errors: validate.errors, body: answer.body })
  const reference = `#/components/responses/${component}`
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      for (const [status, response] of Object.entries(operation.responses)) {
        if ((response as { $ref?: string }).$ref === reference && String(answer.statusCode) === status) exercised.add(`${method.toUpperCase()} ${path} ${status}`)
      }
    }
  }
}
