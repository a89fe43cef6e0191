import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import FindMyWay, { type HTTPMethod } from 'find-my-way'
import { AppError, notFound } from '../../app-error.js'
import { toAppError } from './error-mapping.js'

// OPTIONS is left out: CORS answers preflights on every path, which says nothing of the resource.
const METHODS: HTTPMethod[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']

/**
 * A segment written as a number: a sign at most, then a digit. A path parameter whose schema is a
 * number takes only such a segment; any other (`get_events`, `filename`) makes the path another
 * route's, or none. A number that is not a valid one (`-1`, `1.5`, `01`) still reaches its route,
 * whose 400 says what is wrong with it.
 */
const NUMBER_WRITTEN = /^[+-]?[0-9]/

/** The path parameters of a params schema that are numbers. */
function numericParams(schema: unknown): string[] {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> } | undefined)?.properties ?? {}
  return Object.entries(properties).flatMap(([name, property]) => (property.type === 'integer' || property.type === 'number' ? [name] : []))
}

/**
 * The URLs a route answers. A group's root route (`/` with a prefix) answers the prefix and, unless
 * its prefixTrailingSlash says otherwise, the prefix with a slash, which Fastify adds without onRoute.
 */
export function urlsOf(route: { url: string; routePath?: string; prefixTrailingSlash?: string }): string[] {
  const slashToo = route.routePath === '' && route.url !== '' && (route.prefixTrailingSlash ?? 'both') === 'both'
  return slashToo ? [route.url, `${route.url}/`] : [route.url]
}

/** Whether a request has path parameters (Fastify gives every request an object of them). */
function hasAny(params: unknown): boolean {
  for (const _name in params as object) return true
  return false
}

const fits = (params: unknown, numeric: readonly string[]) =>
  numeric.every((name) => {
    const value = (params as Record<string, unknown>)[name]
    return typeof value === 'string' && NUMBER_WRITTEN.test(value)
  })

/**
 * One error plugin: every error, unknown route and wrong method ends as the envelope. 5xx details
 * but 503's go to the log with the request id, never to the client.
 */
async function errorHandler(fastify: FastifyInstance) {
  // A second routing table, consulted only for unmatched requests, to tell 405 from 404; each route
  // keeps the names of its numeric parameters, which the path must fill with numbers to be its.
  const routes = FindMyWay()
  const numericOf = new Map<string, readonly string[]>()
  fastify.addHook('onRoute', (route) => {
    const numeric = numericParams(route.schema?.params)
    for (const method of [route.method].flat()) {
      for (const url of urlsOf(route)) {
        if (!routes.hasRoute(method as HTTPMethod, url)) routes.on(method as HTTPMethod, url, () => {}, { numeric })
        if (numeric.length > 0) numericOf.set(`${method} ${url}`, numeric)
      }
    }
  })

  /**
   * 405 with Allow when the path is some route's, for other methods; else 404. A path that a route
   * of this very method has the shape of is 404 whatever other methods have there: it names nothing
   * that route has (a docs file that is not there; `GET /v1/events/get_events`, no event called so).
   */
  const unmatched = (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?', 1)[0] ?? '/'
    const ownShape = routes.find(request.method as HTTPMethod, path) !== null
    const allowed = METHODS.filter((method) => {
      const found = routes.find(method, path)
      return found !== null && fits(found.params, (found.store as { numeric: readonly string[] }).numeric)
    })
    if (!ownShape && allowed.length > 0) {
      reply.header('allow', allowed.join(', '))
      return send(
        reply,
        new AppError(405, 'MethodNotAllowed', [`${request.method} is not allowed on ${path}; use ${allowed.join(', ')}.`])
      )
    }
    return send(reply, notFound(`No route ${request.method} ${path}.`))
  }

  // The router matched a route whose number parameter holds no number (GET /v1/events/get_events):
  // the path is not that route's, so it is answered as an unmatched one, before any token is asked for.
  // A callback hook, and a route without path parameters is not looked up: this runs for every
  // request, most of which (the probes of /auth/verify and /health) have none.
  fastify.addHook('onRequest', (request, reply, done) => {
    if (!hasAny(request.params)) return done()
    const numeric = numericOf.get(`${request.method} ${request.routeOptions.url}`)
    if (numeric !== undefined && !fits(request.params, numeric)) return void unmatched(request, reply)
    done()
  })

  fastify.setErrorHandler((error, request, reply) => {
    const appError = toAppError(error)
    // A 503 is a state the service announces once (a store outage: store-outage-log.ts; a full
    // instance: its metrics), not a fault of this request: a line each would drown the log.
    if (appError.statusCode >= 500 && appError.statusCode !== 503) request.log.error({ err: error }, 'request failed')
    return send(reply, appError)
  })

  fastify.setNotFoundHandler(unmatched)
}

/** Seconds a 503 that names no other time asks the client to wait (a store outage usually ends in seconds). */
export const UNAVAILABLE_RETRY_AFTER_S = 5

export function send(reply: FastifyReply, error: AppError) {
  if (error.statusCode === 503 && !reply.hasHeader('retry-after')) reply.header('retry-after', String(UNAVAILABLE_RETRY_AFTER_S))
  return reply.code(error.statusCode).type('application/json; charset=utf-8').send(error.envelope)
}

export default fp(errorHandler, { name: 'error-handler', fastify: '5.x' })
