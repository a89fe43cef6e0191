import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { AppError } from '../../app-error.js'
import { parseStrictJson, utf8Text } from '../../domain/strict-json.js'
import { fromRequest } from './request-input.js'

/**
 * JSON bodies read strictly (see strict-json.ts): bytes that are not UTF-8, a member given twice,
 * a lone surrogate and a `__proto__` member are each refused with a 400 naming where they are,
 * rather than stored changed or called "not valid JSON". Fastify's own parser is replaced for
 * every route. Fastify's text/plain parser goes too: no route reads text, and a text body would
 * reach the schema as a string ("body must be object") instead of getting the 415 of any other
 * unsupported type.
 */
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
