import cors from '@fastify/cors'
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import fp from 'fastify-plugin'
import helmet from 'helmet'
import type { IncomingMessage, ServerResponse } from 'node:http'

// OWASP's headers for a JSON API, made once by helmet: @fastify/helmet re-parsed its options each request, a third of GET /auth/verify's time.
function securityHeaders(): Record<string, string> {
  const headers: Record<string, string> = {}
  const response = {
    setHeader: (name: string, value: string | number) => void (headers[name.toLowerCase()] = String(value)),
    removeHeader: () => {}
  }
  helmet({
    contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
    xFrameOptions: { action: 'deny' },
    crossOriginOpenerPolicy: false,
    crossOriginResourcePolicy: false,
    originAgentCluster: false,
    xDnsPrefetchControl: false,
    xDownloadOptions: false,
    xPermittedCrossDomainPolicies: false,
    xXssProtection: false
  })({} as IncomingMessage, response as unknown as ServerResponse, () => {})
  return headers
}

/** Browsers may call the API from other origins only when CORS_ORIGINS says so. */
async function security(fastify: FastifyInstance) {
  // As pairs: reply.headers(object) lists and reads the object's keys again for every response.
  const headers = Object.entries(securityHeaders())
  fastify.addHook('onRequest', (_request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    for (const [name, value] of headers) reply.header(name, value)
    done()
  })
  const origins = fastify.config.CORS_ORIGINS
  if (origins === undefined) return
  await fastify.register(cors, {
    origin: origins,
    methods: ['GET', 'POST', 'PUT'],
    allowedHeaders: ['Authorization', 'Content-Type'],
    // A page of a longer list says how many there are and where the rest are; a refusal, when to retry.
    exposedHeaders: ['X-Total-Count', 'X-Heartbeats-Total', 'Link', 'Retry-After'],
    maxAge: 600
  })
}

export default fp(security, { name: 'security', fastify: '5.x', decorators: { fastify: ['config'] } })
