import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import FindMyWay, { type HTTPMethod } from 'find-my-way'
import { AppError, notFound } from '../app-error.js'
import { toAppError } from './error-mapping.js'

// OPTIONS is left out: CORS answers preflights on every path, which says nothing of the resource.
const METHODS: HTTPMethod[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']

/**
 * One error plugin: every error, unknown route and wrong method ends as the envelope. 5xx details
 * but 503's go to the log with the request id, never to the client.
 */
async function errorHandler(fastify: FastifyInstance) {
  // A second routing table, consulted only for unmatched requests, to tell 405 from 404.
  const routes = FindMyWay()
  fastify.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      if (!routes.hasRoute(method as HTTPMethod, route.url)) routes.on(method as HTTPMethod, route.url, () => {})
    }
  })

  fastify.setErrorHandler((error, request, reply) => {
    const appError = toAppError(error)
    // A 503 is a state the service announces once (a store outage: store-outage-log.ts; a full
    // instance: its metrics), not a fault of this request: a line each would drown the log.
    if (appError.statusCode >= 500 && appError.statusCode !== 503) request.log.error({ err: error }, 'request failed')
    return send(reply, appError)
  })

  fastify.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?', 1)[0] ?? '/'
    const allowed = METHODS.filter((method) => routes.find(method, path) !== null)
    // A route of this very method matched (a wildcard, such as the docs' static files) and found
    // nothing: that is a 404, not a wrong method.
    if (allowed.length > 0 && !allowed.includes(request.method as HTTPMethod)) {
      reply.header('allow', allowed.join(', '))
      return send(
        reply,
        new AppError(405, 'MethodNotAllowed', [`${request.method} is not allowed on ${path}; use ${allowed.join(', ')}.`])
      )
    }
    return send(reply, notFound(`No route ${request.method} ${path}.`))
  })
}

/** Seconds a 503 that names no other time asks the client to wait (a store outage usually ends in seconds). */
export const UNAVAILABLE_RETRY_AFTER_S = 5

export function send(reply: FastifyReply, error: AppError) {
  if (error.statusCode === 503 && !reply.hasHeader('retry-after')) reply.header('retry-after', String(UNAVAILABLE_RETRY_AFTER_S))
  return reply.code(error.statusCode).type('application/json; charset=utf-8').send(error.envelope)
}

export default fp(errorHandler, { name: 'error-handler', fastify: '5.x' })
