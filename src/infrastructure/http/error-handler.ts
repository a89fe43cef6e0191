import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import FindMyWay, { type HTTPMethod } from 'find-my-way'
import { AppError, notFound } from '../../app-error.js'
import { toAppError } from './error-mapping.js'

// OPTIONS is left out: CORS answers preflights on every path, which says nothing of the resource.
const METHODS: HTTPMethod[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']

// The only segment a numeric path parameter takes: `get_events` makes the path another route's, while `-1` or `01` get the route's 400.
const NUMBER_WRITTEN = /^[+-]?[0-9]/

/** Seconds a 503 that names no other time asks the client to wait (a store outage usually ends in seconds). */
const UNAVAILABLE_RETRY_AFTER_S = 5

function numericParams(schema: unknown): string[] {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> } | undefined)?.properties ?? {}
  return Object.entries(properties).flatMap(([name, property]) => (property.type === 'integer' || property.type === 'number' ? [name] : []))
}

/** The URLs a route answers: a group's root route also answers its prefix with a slash, which Fastify adds without onRoute. */
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

/** Every error, unknown route and wrong method ends as the envelope; 5xx details but 503's go to the log, never to the client. */
async function errorHandler(fastify: FastifyInstance) {
  // A second routing table, consulted only for unmatched requests, to tell 405 from 404.
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

  // 405 with Allow when the path is another method's route; else 404, also when a route of this very method has the path's shape.
  const unmatched = (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?', 1)[0] ?? '/'
    const ownShape = routes.find(request.method as HTTPMethod, path) !== null
    const allowed = METHODS.filter((method) => {
      const found = routes.find(method, path)
      return found !== null && fits(found.params, (found.store as { numeric: readonly string[] }).numeric)
    })
    if (!ownShape && allowed.length > 0) {
      reply.header('allow', allowed.join(', '))
      return send(reply, new AppError(405, 'MethodNotAllowed', [`${request.method} is not allowed on ${path}; use ${allowed.join(', ')}.`]))
    }
    return send(reply, notFound(`No route ${request.method} ${path}.`))
  }

  // A number parameter without a number (GET /v1/events/get_events) is unmatched, before any token is asked; cheap, as every request runs it.
  fastify.addHook('onRequest', (request, reply, done) => {
    if (!hasAny(request.params)) return done()
    const numeric = numericOf.get(`${request.method} ${request.routeOptions.url}`)
    if (numeric !== undefined && !fits(request.params, numeric)) return void unmatched(request, reply)
    done()
  })

  fastify.setErrorHandler((error, request, reply) => {
    const appError = toAppError(error)
    // A 503 is a state announced once (store-outage-log.ts, the metrics), not this request's fault: a line each would drown the log.
    if (appError.statusCode >= 500 && appError.statusCode !== 503) request.log.error({ err: error }, 'request failed')
    return send(reply, appError)
  })

  fastify.setNotFoundHandler(unmatched)
}

export function send(reply: FastifyReply, error: AppError) {
  if (error.statusCode === 503 && !reply.hasHeader('retry-after')) reply.header('retry-after', String(UNAVAILABLE_RETRY_AFTER_S))
  return reply.code(error.statusCode).type('application/json; charset=utf-8').send(error.envelope)
}

export default fp(errorHandler, { name: 'error-handler', fastify: '5.x' })
