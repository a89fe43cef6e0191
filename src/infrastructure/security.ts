import cors from '@fastify/cors'
import helmet from '@fastify/helmet'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

/**
 * Headers for a JSON API: its responses may load and be framed by nothing (the interactive docs
 * set their own policy). Browsers may call it from other origins only when CORS_ORIGINS says so.
 */
async function security(fastify: FastifyInstance) {
  await fastify.register(helmet, {
    contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } }
  })
  const origins = fastify.config.CORS_ORIGINS
  if (origins !== undefined) {
    await fastify.register(cors, {
      origin: origins,
      methods: ['GET', 'POST', 'PUT'],
      allowedHeaders: ['Authorization', 'Content-Type'],
      maxAge: 600
    })
  }
}

export default fp(security, { name: 'security', fastify: '5.x', decorators: { fastify: ['config'] } })
