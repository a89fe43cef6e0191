import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { AppError, badRequest } from '../../app-error.js'

/** The envelope where Node would answer with an empty body: HTTP/1.1 without Host (checked here, not by Node), an Expect but 100-continue. */
async function httpConformance(fastify: FastifyInstance) {
  fastify.addHook('onRequest', (request, _reply, done) => {
    const hostless = request.headers.host === undefined && request.raw.httpVersion === '1.1'
    done(hostless ? badRequest('HTTP/1.1 requests need a Host header.') : undefined)
  })
  fastify.server.on('checkExpectation', (_request: IncomingMessage, response: ServerResponse) => {
    const body = JSON.stringify(new AppError(417, 'BadRequest', ['Only the expectation 100-continue is supported.']).envelope)
    response.writeHead(417, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) })
    response.end(body)
  })
}

export default fp(httpConformance, { name: 'http-conformance', fastify: '5.x', dependencies: ['error-handler'] })
