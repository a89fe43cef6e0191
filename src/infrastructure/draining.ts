import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { serviceUnavailable } from '../app-error.js'

/**
 * Requests that still reach a closing server (on a keep-alive connection, or pipelined) get the
 * 503 envelope, so a load balancer retries them elsewhere. Fastify's own return503OnClosing would
 * answer with its default body instead.
 */
async function draining(fastify: FastifyInstance) {
  let closing = false
  fastify.addHook('preClose', async () => {
    closing = true
  })
  fastify.addHook('onRequest', (_request, _reply, done) => {
    done(closing ? serviceUnavailable('The service is shutting down; try again.') : undefined)
  })
}

export default fp(draining, { name: 'draining', fastify: '5.x', dependencies: ['error-handler'] })
