import t from 'tap'
import { securityApp, type Route } from '../security/hostile.js'

/**
 * 404 or 405 (CONTRACT section 13): 405 only where the path is a route and the method is not one
 * of its methods, with Allow naming them; a path that is no route is 404, whatever routes share its
 * prefix. A path parameter that is an event number is filled only by a segment written as a number,
 * so `/v1/events/get_events` and `/v1/events/filename` are not GET /v1/events/:event_no's paths; and
 * a path with the shape of a route of the method asked is 404 whatever other methods have there
 * (`GET /v1/events/get_events` names no event: 404, not 405 for the batch read's POST).
 */

// OPTIONS is left out: CORS answers a preflight on every path.
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']
const NUMERIC_PARAMS = new Set(['event_no'])
const NUMBER_WRITTEN = /^[+-]?[0-9]/
/** Segments that are not numbers, among them the words the Python client puts after /v1/events/. */
const WORDS = ['get_events', 'filename', 'full-header', 'x', 'NaN']

/** Whether `path` is one of the paths of the route `template`, by the rule above. */
function isPathOf(template: string, path: string): boolean {
  const parts = template.split('/')
  const segments = path.split('/')
  for (const [i, part] of parts.entries()) {
    if (part === '*') return i < segments.length
    const segment = segments[i]
    if (segment === undefined) return false
    if (part.startsWith(':')) {
      if (segment === '' || (NUMERIC_PARAMS.has(part.slice(1)) && !NUMBER_WRITTEN.test(segment))) return false
    } else if (part !== segment) return false
  }
  return parts.length === segments.length
}

/** Whether `path` has the shape of the route `template`: each parameter filled by any segment. */
function isShapeOf(template: string, path: string): boolean {
  const parts = template.split('/')
  const segments = path.split('/')
  for (const [i, part] of parts.entries()) {
    if (part === '*') return i < segments.length
    const segment = segments[i]
    if (segment === undefined || (part.startsWith(':') ? segment === '' : part !== segment)) return false
  }
  return parts.length === segments.length
}

/** A path of the template, each parameter filled with `fill` or a valid value. */
const pathOf = (template: string, fill: (param: string) => string | undefined = () => undefined) =>
  template
    .split('/')
    .map((part) => (part === '*' ? 'x' : part.startsWith(':') ? (fill(part.slice(1)) ?? (NUMERIC_PARAMS.has(part.slice(1)) ? '1' : 'baseband')) : part))
    .join('/')

/** Every path the rule is tried on: each route's own, its number parameters filled with words, and under each prefix of it a path no route has. */
function pathsToTry(routes: Route[]): string[] {
  const paths = new Set<string>()
  for (const { url } of routes) {
    paths.add(pathOf(url))
    for (const param of url.split('/').filter((part) => NUMERIC_PARAMS.has(part.slice(1)))) {
      for (const word of WORDS) paths.add(pathOf(url, (name) => (name === param.slice(1) ? word : undefined)))
    }
    const segments = pathOf(url).split('/')
    for (let end = 1; end < segments.length; end++) {
      const prefix = segments.slice(0, end).join('/')
      paths.add(`${prefix}/no-such-route`)
      if (prefix !== '') paths.add(prefix)
    }
  }
  return [...paths]
}

t.test('every route prefix: 405 only on a path that is a route, for the methods it has not; 404 on a path that is none', async (t) => {
  const { app, routes } = await securityApp(t)
  const api = routes.filter((route) => route.method !== 'OPTIONS')
  const prefixes = new Set(api.map((route) => route.url.split('/').slice(0, 3).join('/')))
  t.ok(['/v1/events', '/v1/event-tracer', '/auth/verify', '/dashboard', '/docs'].every((prefix) => prefixes.has(prefix)), 'the prefixes of every route group are tried')

  let refused = 0
  for (const path of pathsToTry(api)) {
    const allowed = METHODS.filter((method) => api.some((route) => route.method === method && isPathOf(route.url, path)))
    for (const method of METHODS) {
      // No token: a path that is no route, or a method it has not, is told before any token is asked for.
      const response = await app.inject({ method, url: path })
      const what = `${method} ${path}`
      if (allowed.includes(method)) {
        t.not(response.statusCode, 405, `${what} is a route`)
        continue
      }
      refused++
      t.match(response.headers['content-type'], /^application\/json/, `${what}: the envelope`)
      const body = method === 'HEAD' || !String(response.headers['content-type']).startsWith('application/json') ? undefined : response.json()
      // A path with the shape of one of this method's routes names nothing it has: 404 (CONTRACT 13: GET /v1/events/get_events).
      const ownShape = api.some((route) => route.method === method && isShapeOf(route.url, path))
      if (allowed.length > 0 && !ownShape) {
        t.equal(response.statusCode, 405, what)
        t.equal(response.headers.allow, allowed.join(', '), `${what}: Allow`)
        if (body !== undefined) t.strictSame(body, { reasons: [`${method} is not allowed on ${path}; use ${allowed.join(', ')}.`], exception: 'MethodNotAllowed' }, what)
      } else {
        t.equal(response.statusCode, 404, what)
        t.equal(response.headers.allow, undefined, `${what}: no Allow`)
        if (body !== undefined) t.strictSame(body, { reasons: [`No route ${method} ${path}.`], exception: 'NotFound' }, what)
      }
    }
  }
  t.ok(refused > 400, `${refused} requests refused by routing`)
})

t.test('the paths of the Python client that issue 30 names, with a token', async (t) => {
  const { app, reader } = await securityApp(t)
  const send = (method: string, url: string) => app.inject({ method, url, headers: { authorization: reader }, payload: method === 'POST' ? { event_ids: [1] } : undefined })

  const getOfBatch = await send('GET', '/v1/events/get_events')
  t.equal(getOfBatch.statusCode, 404, 'GET of the batch read: no event is called get_events (CONTRACT 13)')
  t.equal(getOfBatch.headers.allow, undefined)
  t.strictSame(getOfBatch.json(), { reasons: ['No route GET /v1/events/get_events.'], exception: 'NotFound' })
  t.equal((await send('POST', '/v1/events/get_events')).statusCode, 200)

  for (const method of ['GET', 'POST']) {
    const file = await send(method, '/v1/events/filename')
    t.equal(file.statusCode, 404, `${method} /v1/events/filename: no route`)
    t.strictSame(file.json(), { reasons: [`No route ${method} /v1/events/filename.`], exception: 'NotFound' })
  }

  const postOfOne = await send('POST', '/v1/events/1')
  t.equal(postOfOne.statusCode, 405, 'an event number is a route, for GET and HEAD')
  t.equal(postOfOne.headers.allow, 'GET, HEAD')

  // A number that is not a valid event number is still that route's: its 400 says why.
  for (const value of ['-1', '1.5', '01', '1e3', '0x10', '9007199254740992']) {
    const response = await send('GET', `/v1/events/${value}`)
    t.equal(response.statusCode, 400, value)
    t.match(response.json(), { exception: 'BadRequest', reasons: [/^path\.event_no /] }, value)
  }
})
