import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import fp from 'fastify-plugin'

/**
 * The request log, without Fastify's two `info` lines per request (disableRequestLogging): at
 * 20,000 verifications a second they were most of a probe's cost and of the log. Every request is
 * logged at `debug`, as Fastify would have logged it; at any level a request that failed (5xx) is
 * logged as an error and one slower than SLOW_REQUEST_MS as a warning, with its time. An event
 * stream is long by design, so its length is not slowness. Hooks are added only for what the
 * configured level will print.
 */
async function requestLog(fastify: FastifyInstance) {
  const slowMs = fastify.config.SLOW_REQUEST_MS
  const debug = fastify.config.LOG_LEVEL === 'debug' || fastify.config.LOG_LEVEL === 'trace'
  if (debug) {
    fastify.addHook('onRequest', (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) => {
      request.log.debug({ req: request }, 'incoming request')
      done()
    })
  }
  fastify.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    const responseTime = reply.elapsedTime
    if (reply.statusCode >= 500) request.log.error({ res: reply, responseTime }, 'request completed')
    else if (responseTime >= slowMs && !isEventStream(reply)) request.log.warn({ req: request, res: reply, responseTime }, 'slow request')
    else if (debug) request.log.debug({ res: reply, responseTime }, 'request completed')
    done()
  })
}

const isEventStream = (reply: FastifyReply) => String(reply.getHeader('content-type') ?? '').startsWith('text/event-stream')

export default fp(requestLog, { name: 'request-log', fastify: '5.x', decorators: { fastify: ['config'] } })
