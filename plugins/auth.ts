import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { AccessTokenResponseSchema, CredentialsSchema, RefreshRequestSchema, TokenInvalidSchema, TokenPairSchema, TokenValidSchema } from '../schemas/auth.js'
import { ErrorEnvelopeSchema, errorResponses, noSecurity, ref, tokenSecurity } from '../schemas/common.js'
import { tokenOf } from '../src/auth/authorization-header.js'
import { verifyPassword } from '../src/auth/passwords.js'
import { authLimits } from '../src/auth/rate-limits.js'
import { hashRefreshToken, newRefreshToken, refreshTokenMatches } from '../src/auth/refresh-tokens.js'
import { authenticationFailed, authorizationAbsent } from '../src/app-error.js'

const WRONG_CREDENTIALS = 'Invalid username or password.'
const WRONG_REFRESH_TOKEN = 'The refresh token is not valid for this user.'

/** POST /auth, GET /auth/verify, POST /auth/refresh (CONTRACT sections 2 and 3). */
const auth: FastifyPluginAsyncTypebox = async (fastify) => {
  const { store, tokens, config, clock } = fastify

  // Probes poll verify, so it is not throttled; refresh only generously (see authLimits).
  const limits = await authLimits(fastify, config)

  fastify.post(
    '/',
    {
      prefixTrailingSlash: 'no-slash',
      onRequest: limits.login,
      preValidation: limits.loginAs,
      onResponse: limits.answered,
      schema: {
        tags: ['auth'],
        operationId: 'login',
        summary: 'Issue an access token and a refresh token',
        description:
          'The new refresh token replaces the previous one of the user; access tokens already issued stay ' +
          `valid until they expire. Rate limited: ${config.AUTH_ADDRESS_RATE_LIMIT ?? config.AUTH_RATE_LIMIT} attempts a minute ` +
          `per address and ${config.AUTH_RATE_LIMIT} per (address, username) that do not log in (a login that succeeds counts nowhere), and ` +
          `${config.AUTH_USER_FAILURE_LIMIT} failed attempts per username every ${config.AUTH_USER_FAILURE_WINDOW} seconds, beyond which ` +
          'only addresses that have failed for that username wait.',
        security: noSecurity(),
        body: ref(CredentialsSchema),
        response: { 200: ref(TokenPairSchema, { description: 'The tokens.' }), ...errorResponses(400, 401, 413, 415, 429) }
      }
    },
    async (request, reply) => {
      const { body } = request
      const refused = async () => {
        await limits.failed(request)
        return authenticationFailed(WRONG_CREDENTIALS)
      }
      return limits.attempt(request, reply, async () => {
        const user = await store.users.find(body.username)
        const passwordMatches = await verifyPassword(body.password, user?.password_hash)
        if (user === null || !passwordMatches) throw await refused()
        const refresh_token = newRefreshToken()
        const expiresAt = clock() + config.REFRESH_TOKEN_TTL * 1000
        // The user may have been removed while the password was being checked.
        if (!(await store.users.saveRefreshToken(user.name, hashRefreshToken(refresh_token), expiresAt))) throw await refused()
        return { access_token: tokens.issue(user.name), refresh_token }
      })
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
      onRequest: [limits.refresh, fastify.authenticateAllowingExpired],
      schema: {
        tags: ['auth'],
        operationId: 'refreshToken',
        summary: 'Exchange an active or expired access token and the refresh token for a new access token',
        description:
          'The refresh token is not rotated; it works until it expires or the user logs in again. ' +
          `Rate limited to ${config.REFRESH_RATE_LIMIT} requests a minute per address.`,
        security: tokenSecurity(),
        body: ref(RefreshRequestSchema),
        response: { 200: ref(AccessTokenResponseSchema, { description: 'A new access token.' }), ...errorResponses(400, 401, 413, 415, 429) }
      }
    },
    async (request) => {
      const user = await store.users.find(request.user.user_id)
      const current =
        user !== null &&
        user.refresh_token_hash !== null &&
        (user.refresh_token_expires_at ?? 0) > clock() &&
        refreshTokenMatches(request.body.refresh_token, user.refresh_token_hash)
      if (!current) throw authenticationFailed(WRONG_REFRESH_TOKEN)
      return { access_token: tokens.issue(request.user.user_id) }
    }
  )
}

export default auth
