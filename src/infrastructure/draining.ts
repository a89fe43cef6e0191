import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { serviceUnavailable } from '../app-error.js'

/**
 * How long a closing server waits for its connections before it cuts those still open: inside the
 * 10 s that `docker stop`, the systemd unit and the server's own grace give a stop, with room left
 * to close the store.
 */
export const CUT_CONNECTIONS_AFTER_MS = 8_000

export interface DrainingOptions {
  /** CUT_CONNECTIONS_AFTER_MS unless a test makes it shorter. */
  cutConnectionsAfterMs?: number
}

/**
 * How a closing server lets go of its clients. Node closes the connections idle when the close
 * begins and stops timing requests out; the rest is here:
 * - Requests that still reach it (on a keep-alive connection, or pipelined) get the 503 envelope,
 *   so a load balancer retries them elsewhere; Fastify's own return503OnClosing would answer with
 *   its default body instead.
 * - An answer sent while it closes says `Connection: close`, and the connection ends with it: one
 *   whose request was in flight when the close began would otherwise stay open as long as its
 *   client keeps it (72 s by default), holding the stop until SIGKILL.
 * - Whatever is still open after `cutConnectionsAfterMs` (an upload trickling in, a client that
 *   reads nothing) is cut, said in a warning.
 */
async function draining(fastify: FastifyInstance, { cutConnectionsAfterMs = CUT_CONNECTIONS_AFTER_MS }: DrainingOptions) {
  let closing = false
  let cutting: NodeJS.Timeout | undefined
  fastify.addHook('preClose', async () => {
    closing = true
    // Not unref'd: a close waiting for a connection that holds nothing else alive must still end.
    cutting = setTimeout(() => cutOpenConnections(fastify, cutConnectionsAfterMs), cutConnectionsAfterMs)
  })
  fastify.addHook('onClose', async () => clearTimeout(cutting))
  fastify.addHook('onRequest', (_request, _reply, done) => {
    done(closing ? serviceUnavailable('The service is shutting down; try again.') : undefined)
  })
  fastify.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close')
    done(null, payload)
  })
}

function cutOpenConnections(fastify: FastifyInstance, afterMs: number) {
  fastify.server.getConnections((_error, count) => {
    const connections = `${count} connection${count === 1 ? '' : 's'}`
    fastify.log.warn({ connections: count }, `closing: cut ${connections} still open after ${afterMs} ms`)
    fastify.server.closeAllConnections()
  })
}

export default fp(draining, { name: 'draining', fastify: '5.x', dependencies: ['error-handler'] })
