import rateLimit from '@fastify/rate-limit'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import {
  AccessTokenResponseSchema,
  CredentialsSchema,
  RefreshRequestSchema,
  TokenInvalidSchema,
  TokenPairSchema,
  TokenValidSchema
} from '../schemas/auth.js'
import { ErrorEnvelopeSchema, errorResponses, noSecurity, ref, tokenSecurity } from '../schemas/common.js'
import { tokenOf } from '../src/auth/authorization-header.js'
import { verifyPassword } from '../src/auth/passwords.js'
import { hashRefreshToken, newRefreshToken, refreshTokenMatches } from '../src/auth/refresh-tokens.js'
import { AppError, authenticationFailed, authorizationAbsent } from '../src/errors.js'

const WRONG_CREDENTIALS = 'Invalid username or password.'
const WRONG_REFRESH_TOKEN = 'The refresh token is not valid for this user.'

/** POST /auth, GET /auth/verify, POST /auth/refresh (CONTRACT sections 2 and 3). */
const auth: FastifyPluginAsyncTypebox = async (fastify) => {
  const { store, tokens, config } = fastify

  // Only POST /auth is throttled: the Python client may refresh before every call and probes poll
  // verify. Every attempt counts, per client address (before the body is read) and per username.
  await fastify.register(rateLimit, { global: false })
  const limits = { max: config.AUTH_RATE_LIMIT, timeWindow: 60_000 }
  const perAddress = throttle(fastify.createRateLimit(limits))
  const perUsername = throttle(
    fastify.createRateLimit({
      ...limits,
      keyGenerator: (request) => `user:${String((request.body as { username?: unknown }).username)}`
    }),
    (request) => typeof (request.body as { username?: unknown } | undefined)?.username === 'string'
  )

  fastify.post(
    '/',
    {
      prefixTrailingSlash: 'no-slash',
      onRequest: perAddress,
      preValidation: perUsername,
      schema: {
        tags: ['auth'],
        operationId: 'login',
        summary: 'Issue an access token and a refresh token',
        description:
          'The new refresh token replaces the previous one of the user; access tokens already issued stay ' +
          `valid until they expire. Rate limited to ${config.AUTH_RATE_LIMIT} attempts a minute per address and per username.`,
        security: noSecurity(),
        body: ref(CredentialsSchema),
        response: {
          200: ref(TokenPairSchema, { description: 'The tokens.' }),
          ...errorResponses(400, 401, 413, 415, 429)
        }
      }
    },
    async ({ body }) => {
      const user = await store.findUser(body.username)
      const passwordMatches = await verifyPassword(body.password, user?.passwordHash)
      if (user === null || !passwordMatches) throw authenticationFailed(WRONG_CREDENTIALS)
      const refresh_token = newRefreshToken()
      const expiresAt = Date.now() + config.REFRESH_TOKEN_TTL * 1000
      // The user may have been removed while the password was being checked.
      if (!(await store.saveRefreshToken(user.name, hashRefreshToken(refresh_token), expiresAt))) {
        throw authenticationFailed(WRONG_CREDENTIALS)
      }
      return { access_token: tokens.issue(user.name), refresh_token }
    }
  )

  fastify.get(
    '/verify',
    {
      schema: {
        tags: ['auth'],
        operationId: 'verifyToken',
        summary: 'Check an access token',
        description: 'No Authorization header: 400 `Unauthorized`. An expired token: 401 with reason `Signature has expired.`',
        security: tokenSecurity(),
        response: {
          200: ref(TokenValidSchema, { description: 'The token is valid.' }),
          400: ref(ErrorEnvelopeSchema, { description: 'Unauthorized: no Authorization header.' }),
          401: ref(TokenInvalidSchema, { description: 'InvalidToken: expired, forged or malformed.' })
        }
      }
    },
    async (request, reply) => {
      const token = tokenOf(request.raw)
      if (token === undefined) throw authorizationAbsent(400)
      const result = tokens.verify(token)
      if (result.ok) return { valid: true as const }
      return reply.code(401).send({ valid: false, reasons: [result.reason], exception: 'InvalidToken' })
    }
  )

  fastify.post(
    '/refresh',
    {
      onRequest: fastify.authenticateAllowingExpired,
      schema: {
        tags: ['auth'],
        operationId: 'refreshToken',
        summary: 'Exchange an active or expired access token and the refresh token for a new access token',
        description: 'The refresh token is not rotated; it works until it expires or the user logs in again.',
        security: tokenSecurity(),
        body: ref(RefreshRequestSchema),
        response: {
          200: ref(AccessTokenResponseSchema, { description: 'A new access token.' }),
          ...errorResponses(400, 401, 413, 415)
        }
      }
    },
    async (request) => {
      const user = await store.findUser(request.user.user_id)
      const current =
        user !== null &&
        user.refreshTokenHash !== null &&
        (user.refreshTokenExpiresAt ?? 0) > Date.now() &&
        refreshTokenMatches(request.body.refresh_token, user.refreshTokenHash)
      if (!current) throw authenticationFailed(WRONG_REFRESH_TOKEN)
      return { access_token: tokens.issue(request.user.user_id) }
    }
  )
}

type Limiter = ReturnType<FastifyInstance['createRateLimit']>

/** A hook that answers 429 with Retry-After once `limiter` is exceeded. */
function throttle(limiter: Limiter, applies: (request: FastifyRequest) => boolean = () => true) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    if (!applies(request)) return
    const result = await limiter(request)
    if (result.isAllowed || !result.isExceeded) return
    reply.header('retry-after', result.ttlInSeconds)
    throw new AppError(429, 'TooManyRequests', [
      `Too many login attempts; try again in ${result.ttlInSeconds} seconds.`
    ])
  }
}

export default auth
