import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyHttpOptions, type FastifyInstance } from 'fastify'
import type { Server } from 'node:http'
import fp from 'fastify-plugin'
import authRoutes from '../plugins/auth.js'
import dashboard, { builtDashboard } from '../plugins/dashboard.js'
import eventRoutes from '../plugins/events.js'
import serviceRoutes from '../plugins/service.js'
import tracerRoutes from '../plugins/tracer.js'
import { sharedSchemas } from '../schemas/index.js'
import type { Config } from './config.js'
import authentication from './infrastructure/authentication.js'
import { clientErrorHandler, frameworkErrors } from './infrastructure/http/client-errors.js'
import docs from './infrastructure/docs.js'
import draining, { type DrainingOptions } from './infrastructure/draining.js'
import errorHandler from './infrastructure/http/error-handler.js'
import storeOutageLog from './infrastructure/store-outage-log.js'
import jsonBodies from './infrastructure/http/json-bodies.js'
import httpConformance from './infrastructure/http/http-conformance.js'
import security from './infrastructure/http/security.js'
import streamedResponses from './infrastructure/streamed-responses/streamed-responses.js'
import transitionHub from './infrastructure/live-stream/transition-hub.js'
import keptAuditUpkeep, { type KeptAuditUpkeepOptions } from './kept-audit/upkeep.js'
import windowReads from './infrastructure/streamed-responses/window-reads.js'
import { RequestLogController, requestLoggers } from './infrastructure/http/request-log.js'
import metrics from './infrastructure/metrics.js'
import auditMetrics from './infrastructure/audit-metrics.js'
import { buildSerializer, buildValidator } from './infrastructure/http/schema-compilers.js'
import type { Store } from './store/port.js'

declare module 'fastify' {
  interface FastifyInstance {
    config: Config
    store: Store
    /** Every "now" a route or a gauge reads, ms since the epoch: tests inject one to move time without sleeping. */
    clock: () => number
  }
}

/** Anything pino can write log lines to. */
type LogStream = { write(line: string): void }

export interface AppOptions {
  config: Config
  store: Store
  /** The options below are for tests: standard output, the clock, dist/dashboard and the default timings otherwise. */
  logStream?: LogStream
  /** Date.now by default, looked up at each call, so that a test that replaces Date.now moves this clock too. */
  now?: () => number
  dashboardRoot?: string
  keptAuditUpkeep?: KeptAuditUpkeepOptions
  draining?: DrainingOptions
}

/** Server options shared by production and tests: a test app built otherwise tests another program. */
export function serverOptions(config: Config, logStream?: LogStream): FastifyHttpOptions<Server> {
  return {
    logger: {
      level: config.LOG_LEVEL,
      // Fastify logs no headers or bodies; these paths guard anything that ever logs them.
      redact: { paths: ['req.headers.authorization', '*.password', '*.refresh_token', '*.access_token'], censor: '[redacted]' },
      mixin: requestLoggers.mixin,
      ...(logStream === undefined ? {} : { stream: logStream })
    },
    childLoggerFactory: requestLoggers.childLoggerFactory,
    // Behind proxies named in TRUST_PROXY, request.ip (the key of the rate limits) is the client's
    // address from X-Forwarded-For; anyone else's X-Forwarded-For is not believed.
    ...(config.TRUST_PROXY === undefined ? {} : { trustProxy: config.TRUST_PROXY }),
    bodyLimit: 1024 * 1024,
    requestTimeout: config.REQUEST_TIMEOUT_MS,
    // 72 s by default: longer than the usual load balancer idle timeout (60 s), so the balancer closes first.
    keepAliveTimeout: config.KEEP_ALIVE_TIMEOUT_MS,
    // Answered by the draining plugin, in the envelope.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    clientErrorHandler,
    http: {
      // The http-conformance plugin answers a missing Host itself, in the envelope.
      requireHostHeader: false,
      // Node checks requestTimeout every 30 s by default, and enforces headersTimeout (60 s) instead when
      // it is longer: a trickled body outlived a 30 s requestTimeout by a minute. Same bound, checked every tenth of it.
      headersTimeout: config.REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: Math.min(1000, Math.ceil(config.REQUEST_TIMEOUT_MS / 10))
    },
    frameworkErrors,
    // Requests are logged at debug, and whatever fails or is slow at any level.
    logController: new RequestLogController({ slowMs: config.SLOW_REQUEST_MS }),
    schemaController: { compilersFactory: { buildValidator, buildSerializer } }
  }
}

/** The whole service as one plugin: shared services first, then the route groups by prefix. */
async function app(fastify: FastifyInstance, { config, store, now = () => Date.now(), dashboardRoot, keptAuditUpkeep: upkeepOptions = {}, draining: drainingOptions = {} }: AppOptions) {
  fastify.decorate('config', config)
  fastify.decorate('store', store)
  fastify.decorate('clock', now)
  fastify.addHook('onClose', () => store.close())
  await fastify.register(metrics)
  await fastify.register(auditMetrics)
  await fastify.register(keptAuditUpkeep, upkeepOptions)
  for (const schema of sharedSchemas(config.TRACER_SITES)) fastify.addSchema(schema)

  await fastify.register(errorHandler)
  await fastify.register(storeOutageLog)
  await fastify.register(jsonBodies)
  await fastify.register(draining, drainingOptions)
  await fastify.register(httpConformance)
  await fastify.register(security)
  await fastify.register(docs)
  await fastify.register(authentication)
  await fastify.register(streamedResponses)
  await fastify.register(windowReads)
  await fastify.register(transitionHub)

  await fastify.register(serviceRoutes)
  await fastify.register(authRoutes, { prefix: '/auth' })
  await fastify.register(eventRoutes, { prefix: '/v1/events' })
  await fastify.register(tracerRoutes, { prefix: '/v1/event-tracer' })
  await fastify.register(dashboard, { root: dashboardRoot ?? builtDashboard() })
}

export const appPlugin = fp(app, { name: 'frb-tracer', fastify: '5.x' })

/** A ready-to-listen instance; the app owns the store from here and closes it with itself. */
export async function buildApp(options: AppOptions) {
  const fastify = Fastify(serverOptions(options.config, options.logStream)).withTypeProvider<TypeBoxTypeProvider>()
  // A client may half-close once its request is sent and still wait for the answer (RFC 9112, 9.6): Node
  // ended such connections at once, and a draining worker dropped answers (1 run in 3 of workers.test.ts).
  // The http.Server property is read by Node 20 and 24 but neither typed nor documented.
  Object.assign(fastify.server, { httpAllowHalfOpen: true })
  await fastify.register(appPlugin, options)
  await fastify.ready()
  return fastify
}
