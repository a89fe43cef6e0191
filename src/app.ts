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
import { clientErrorHandler, frameworkErrors } from './infrastructure/client-errors.js'
import docs from './infrastructure/docs.js'
import draining from './infrastructure/draining.js'
import errors from './infrastructure/errors.js'
import httpConformance from './infrastructure/http-conformance.js'
import security from './infrastructure/security.js'
import metrics, { measuredStore } from './infrastructure/metrics.js'
import { buildSerializer, buildValidator } from './infrastructure/schema-compilers.js'
import type { Store } from './store/port.js'

declare module 'fastify' {
  interface FastifyInstance {
    config: Config
    store: Store
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
  /** The built dashboard: dist/dashboard unless a test serves another folder. */
  dashboardRoot?: string
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
      ...(logStream === undefined ? {} : { stream: logStream })
    },
    bodyLimit: 1024 * 1024,
    requestTimeout: 30_000,
    // Longer than the usual load balancer idle timeout (60 s), so the balancer closes first.
    keepAliveTimeout: 72_000,
    // Answered by the draining plugin, in the envelope.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    clientErrorHandler,
    // The http-conformance plugin answers a missing Host itself, in the envelope.
    http: { requireHostHeader: false },
    frameworkErrors,
    schemaController: { compilersFactory: { buildValidator, buildSerializer } }
  }
}

/** The whole service as one plugin: shared services first, then the route groups by prefix. */
async function app(fastify: FastifyInstance, { config, store, dashboardRoot }: AppOptions) {
  await fastify.register(metrics)
  fastify.decorate('config', config)
  fastify.decorate('store', measuredStore(store, fastify.metrics))
  fastify.addHook('onClose', () => store.close())
  for (const schema of sharedSchemas(config.TRACER_SITES)) fastify.addSchema(schema)

  await fastify.register(errors)
  await fastify.register(draining)
  await fastify.register(httpConformance)
  await fastify.register(security)
  await fastify.register(docs)
  await fastify.register(authentication)

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
  await fastify.register(appPlugin, options)
  await fastify.ready()
  return fastify
}
