import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { AppError } from '../../app-error.js'
import { parseStrictJson, utf8Text } from '../../domain/strict-json.js'
import { fromRequest } from './request-input.js'

// JSON bodies read strictly (strict-json.ts): bad UTF-8, a repeated member, a lone surrogate or `__proto__` is a 400 naming where.
// No route reads text: a text/plain body gets the 415 of any unsupported type, not "body must be object".
async function jsonBodies(fastify: FastifyInstance) {
  fastify.removeContentTypeParser('text/plain')
  fastify.removeContentTypeParser('application/json')
  fastify.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => {
    const bytes = body as Buffer
    if (bytes.length === 0) return done(new AppError(400, 'BadRequest', ['The body is empty but Content-Type says JSON.']), undefined)
    try {
      done(null, fromRequest(['body'], () => parseStrictJson(utf8Text(bytes))))
    } catch (error) {
      done(error instanceof SyntaxError ? new AppError(400, 'BadRequest', ['The body is not valid JSON.']) : (error as Error), undefined)
    }
  })
}

export default fp(jsonBodies, { name: 'json-bodies', fastify: '5.x' })
