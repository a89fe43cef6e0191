import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { errorResponse, errorResponses, noSecurity, ref, tokenSecurity } from '../schemas/common.js'
import { HealthSchema, VersionSchema } from '../schemas/service.js'
import { packageVersion } from '../src/package-info.js'
import { KeptAuditRebuildingError } from '../src/kept-audit/rebuild.js'

/** Routes without a token: for clients choosing a base URL, load balancers and humans. */
const service: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get(
    '/version',
    {
      schema: {
        tags: ['service'],
        operationId: 'getVersion',
        summary: 'Version of the running service',
        description: 'The version of the running service, from its package.json. The Python client calls it to choose a base URL.',
        security: noSecurity(),
        response: { 200: ref(VersionSchema, { description: 'The version.' }) }
      }
    },
    async () => ({ version: packageVersion })
  )

  fastify.get(
    '/health',
    {
      schema: {
        tags: ['service'],
        operationId: 'getHealth',
        summary: 'The process is up',
        description: 'Answers while the process runs, whether or not the store answers: a liveness probe.',
        security: noSecurity(),
        response: { 200: ref(HealthSchema, { description: 'The process is up.' }) }
      }
    },
    async () => ({ status: 'ok' as const })
  )

  fastify.get(
    '/ready',
    {
      schema: {
        tags: ['service'],
        operationId: 'getReady',
        summary: 'The store answers; 503 while it does not, or while the kept audit is being made again',
        description:
          'Pings the store: a readiness probe for a load balancer. The service recovers by itself when the store returns. ' +
          'An instance that started on a store whose kept audit was made under other settings (or by a release that audits otherwise) ' +
          'makes it again while it serves: until that ends, this answers 503 with how far it has come, and so do the reads of the audit; every other route is served.',
        security: noSecurity(),
        response: { 200: ref(HealthSchema, { description: 'The store answers.' }), ...errorResponses(503) }
      }
    },
    async () => {
      const progress = fastify.store.keptAudit.rebuilding()
      if (progress !== null) throw new KeptAuditRebuildingError(progress)
      await fastify.store.ping()
      return { status: 'ok' as const }
    }
  )

  // Open to scrapers by default; METRICS_REQUIRE_TOKEN asks for an access token of any role.
  const metricsNeedToken = fastify.config.METRICS_REQUIRE_TOKEN
  fastify.get(
    '/metrics',
    {
      ...(metricsNeedToken ? { onRequest: fastify.authenticate } : {}),
      schema: {
        tags: ['service'],
        operationId: 'getMetrics',
        summary: 'Prometheus metrics: requests and latency by route and status, store latency, process',
        description: 'Prometheus text exposition format, for a scraper: request counts and latency by route and status, the latency of store calls, and the process’s own metrics. With WORKERS above 1, every worker’s metrics merged (counters summed); 503 when a worker does not answer.',
        security: metricsNeedToken ? tokenSecurity() : noSecurity(),
        response: {
          200: { description: 'Prometheus text exposition format.', content: { 'text/plain': { schema: Type.String() } } },
          ...(metricsNeedToken ? errorResponses(401) : {}),
          503: errorResponse(503, 'ServiceUnavailable: with WORKERS above 1, a worker did not hand its metrics over in time; wait `Retry-After` seconds.')
        }
      }
    },
    async (_request, reply) => {
      const text = await fastify.scrapeMetrics()
      reply.type(fastify.metrics.contentType)
      return text
    }
  )

  fastify.get(
    '/openapi.json',
    {
      schema: {
        tags: ['service'],
        operationId: 'getOpenApi',
        summary: 'This OpenAPI document',
        description: 'This document as JSON, generated from the route schemas of the running service. /docs renders it.',
        security: noSecurity(),
        response: { 200: Type.Object({}, { additionalProperties: true, description: 'OpenAPI 3.1 document.' }) }
      }
    },
    async () => fastify.swagger()
  )
}

export default service
