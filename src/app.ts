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
    /**
     * The time now, ms since the epoch: every "now" a route or a gauge reads (write times, the
     * audit's deadlines, the tokens' issue and expiry, the login limits' windows). Tests inject
     * one to place events relative to it, or to move time, without sleeping.
     */
    clock: () => number
  }
}

/** Anything pino can write log lines to. */
export interface LogStream {
  write(line: string): void
}

export interface AppOptions {
  config: Config
  store: Store
  /** Where log lines go: standard output unless a test captures them. */
  logStream?: LogStream
  /**
   * The clock of the routes (ms since the epoch), unless a test sets the time: Date.now, looked up at
   * each call, so that a test that replaces Date.now moves this clock too.
   */
  now?: () => number
  /** The built dashboard: dist/dashboard unless a test serves another folder. */
  dashboardRoot?: string
  /** How often the kept audit's deadlines and records are checked: the defaults unless a test makes them quicker. */
  keptAuditUpkeep?: KeptAuditUpkeepOptions
  /** How long a close waits for connections before cutting them: the default unless a test makes it shorter. */
  draining?: DrainingOptions
}

/** Server options shared by production and tests: a test app built otherwise tests another program. */
export function serverOptions(config: Config, logStream?: LogStream): FastifyHttpOptions<Server> {
  return {
    logger: {
      level: config.LOG_LEVEL,
      // Fastify logs no headers or bodies; these paths guard anything that ever logs them.
      redact: {
        paths: ['req.headers.authorization', '*.password', '*.refresh_token', '*.access_token'],
        censor: '[redacted]'
      },
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
      // Node enforces requestTimeout only when it checks, every 30 s unless told otherwise, and
      // while headersTimeout (60 s unless told otherwise) is the longer of the two it enforces that
      // instead: a trickled body outlived a 30 s requestTimeout by up to a minute. The headers get
      // the same bound, checked every tenth of it (at most every second): within 10% of the timeout.
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
  // A client may shut its sending side once its request is sent and still wait for the answer
  // (RFC 9112, 9.6). Node's server ends the connection on that FIN unless told otherwise, and
  // a worker draining on SIGTERM then dropped the answers to writes whose bodies came last (1 run
  // in 3 of workers.test.ts). Told otherwise, it ends the connection once the answer is sent. The
  // setting is a property of http.Server that Node reads (20 and 24) but does not type or document.
  Object.assign(fastify.server, { httpAllowHalfOpen: true })
  await fastify.register(appPlugin, options)
  await fastify.ready()
  return fastify
}
