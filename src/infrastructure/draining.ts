import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { serviceUnavailable } from '../app-error.js'

// Inside the 10 s that `docker stop`, the systemd unit and the server's grace give a stop, with room to close the store.
const CUT_CONNECTIONS_AFTER_MS = 8_000

export type DrainingOptions = { cutConnectionsAfterMs?: number }

// Beyond Node's closing of idle connections: requests still arriving get the 503 envelope, answers say `Connection: close` (a keep-alive
// client would hold the stop until SIGKILL), and what is open after `cutConnectionsAfterMs` is cut, said in a warning.
async function draining(fastify: FastifyInstance, { cutConnectionsAfterMs = CUT_CONNECTIONS_AFTER_MS }: DrainingOptions) {
  let closing = false
  let cutting: NodeJS.Timeout | undefined
  fastify.addHook('preClose', async () => {
    closing = true
    // Not unref'd: a close waiting for a connection that holds nothing else alive must still end.
    cutting = setTimeout(() => {
      fastify.server.getConnections((_error, count) => {
        fastify.log.warn({ connections: count }, `closing: cut ${count} connection${count === 1 ? '' : 's'} still open after ${cutConnectionsAfterMs} ms`)
        fastify.server.closeAllConnections()
      })
    }, cutConnectionsAfterMs)
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

export default fp(draining, { name: 'draining', fastify: '5.x', dependencies: ['error-handler'] })
