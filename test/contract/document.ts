import { readFileSync } from 'node:fs'
import t from 'tap'
import { document, type Operation } from './contract.js'

/*
 * What clients generated from openapi.yaml rely on, beyond what the linters check: the committed
 * document is read, so each finding names the place to fix.
 */

const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, operation]): [string, Operation] => [`${method.toUpperCase()} ${path}`, operation])
)

const requestBodies = operations.flatMap(([label, operation]) =>
  Object.entries(operation.requestBody?.content ?? {}).map(([mediaType, { schema }]): [string, unknown] => [`${label} ${mediaType}`, schema])
)

type Node = Record<string, unknown>
const COMPONENT = '#/components/schemas/'

/** Calls `visit` on every schema under `schema`, following component references once each. */
function walk(schema: unknown, where: string, visit: (node: Node, where: string, inline: boolean) => void, seen = new Set<unknown>(), inline = false) {
  const target = (schema as Node | null)?.$ref
  if (typeof target === 'string') {
    const name = target.slice(COMPONENT.length)
    if (!seen.has(name)) {
      seen.add(name)
      walk(document.components.schemas[name], name, visit, seen)
    }
    return
  }
  if (schema === null || typeof schema !== 'object') return
  const node = schema as Node
  visit(node, where, inline)
  for (const [name, property] of Object.entries((node.properties ?? {}) as Node)) walk(property, `${where}.${name}`, visit, seen, true)
  if (node.items !== undefined) walk(node.items, `${where}[]`, visit, seen, true)
  for (const key of ['anyOf', 'oneOf', 'allOf']) {
    for (const branch of (node[key] ?? []) as unknown[]) walk(branch, where, visit, seen, inline)
  }
}

const isObject = (node: Node) => node.type === 'object' || node.properties !== undefined

t.test('every request body refuses unknown members at every depth', async (t) => {
  const open: string[] = []
  for (const [label, schema] of requestBodies) {
    walk(schema, label, (node, where) => {
      if (isObject(node) && node.additionalProperties !== false) open.push(where)
    })
  }
  t.strictSame(open, [], 'objects without additionalProperties: false')
})

t.test('no request body member has a default: generated clients would make it required', async (t) => {
  const defaulted: string[] = []
  for (const [label, schema] of requestBodies) {
    walk(schema, label, (node, where) => {
      if (Object.hasOwn(node, 'default')) defaulted.push(where)
    })
  }
  t.strictSame(defaulted, [])
})

t.test('every object inside another schema is a named component', async (t) => {
  const inlined: string[] = []
  const visit = (node: Node, where: string, inline: boolean) => {
    if (inline && isObject(node)) inlined.push(where)
  }
  // Each component is walked on its own: references are not followed into another one.
  const components = new Set(Object.keys(document.components.schemas))
  for (const [name, schema] of Object.entries(document.components.schemas)) walk(schema, name, visit, components)
  t.strictSame(inlined, [])
})

t.test('POST /v1/events takes a JSON array, or NDJSON described as the text it is', async (t) => {
  const content = document.paths['/v1/events']?.post?.requestBody?.content ?? {}
  t.strictSame(Object.keys(content), ['application/json', 'application/x-ndjson'])
  t.match(content['application/json'], { schema: { type: 'array', items: { $ref: '#/components/schemas/EventInput' }, maxItems: 1000 } })
  t.match(content['application/x-ndjson'], {
    schema: { type: 'string', description: /one object a line \(at most 1000 lines\)/, contentMediaType: 'application/x-ndjson', contentSchema: { $ref: '#/components/schemas/EventInput' } }
  })
})

t.test('every operation is described and states its security; only the public ones need no token', async (t) => {
  for (const [label, operation] of operations) {
    t.ok((operation.description ?? '').length > 0, `${label} has a description`)
    t.ok(Array.isArray(operation.security), `${label} states its security`)
  }
  const open = operations.filter(([, operation]) => operation.security?.length === 0).map(([label]) => label)
  t.strictSame(open.sort(), [
    'GET /health', 'GET /metrics', 'GET /openapi.json', 'GET /ready', 'GET /version',
    'HEAD /health', 'HEAD /metrics', 'HEAD /openapi.json', 'HEAD /ready', 'HEAD /version', 'POST /auth'
  ])
})

t.test('the document names its license, the same as package.json, and its server', async (t) => {
  const { license } = JSON.parse(readFileSync('package.json', 'utf8')) as { license?: string }
  t.equal(license, 'MIT')
  t.match(document.info.license, { name: 'MIT', url: 'https://spdx.org/licenses/MIT.html' })
  t.strictSame(document.servers?.map((server) => server.url), ['/'])
})
