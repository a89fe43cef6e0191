import fastifyJwt from '@fastify/jwt'
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import { createVerifier, TokenError } from 'fast-jwt'
import fp from 'fastify-plugin'
import type { AccessClaims, Role } from '../../schemas/auth.js'
import { AccessTokens } from '../auth/access-tokens.js'
import { tokenOf } from '../auth/authorization-header.js'
import { RoleCache } from '../auth/role-cache.js'
import { authorizationAbsent, forbidden, invalidToken } from '../app-error.js'

declare module '@fastify/jwt' {
  interface FastifyJWT {
    payload: AccessClaims
    user: AccessClaims
  }
}

type RequestHook = (request: FastifyRequest) => Promise<void>
type CallbackHook = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void

declare module 'fastify' {
  interface FastifyInstance {
    tokens: AccessTokens
    /** onRequest hook of every `/v1` route: a valid, unexpired access token, or 401. */
    authenticate: CallbackHook
    /** onRequest hook of `/auth/refresh`: our signature and issuer, but the token may be expired. */
    authenticateAllowingExpired: CallbackHook
    /** preHandler of write routes: the caller's current role (from the store) is at least `role`. */
    requireRole(role: Role): RequestHook
  }
}

const rank: Record<Role, number> = { reader: 0, writer: 1, admin: 2 }

async function authentication(fastify: FastifyInstance) {
  const { config, store } = fastify
  const secret = config.JWT_SECRET
  if (secret === undefined) throw new Error('JWT_SECRET must be resolved before the app is built')

  const verifyOptions = {
    algorithms: ['HS256' as const],
    allowedIss: config.JWT_ISSUER,
    requiredClaims: ['user_id', 'exp', 'iat', 'iss'],
    clockTolerance: 0
  }
  // Verification results are cached (up to 1000 tokens) until each token's own expiry; failures for
  // ten minutes, since a token that fails cannot pass later, except one not valid yet: it passes
  // from its nbf on, so that refusal is not kept (only our secret signs such a token, so no
  // stranger can make the service verify them again and again). Keyed by the token itself:
  // fast-jwt's default key is a SHA-256 of it, which costs as much as verifying.
  const errorCacheTTL = (error: TokenError) => (error.code === TokenError.codes.inactive ? 0 : 600_000)
  const cachedVerifyOptions = { ...verifyOptions, cache: 1000, cacheKeyBuilder: (token: string) => token, errorCacheTTL }
  await withoutCacheKeyWarning(() =>
    fastify.register(fastifyJwt, { secret, sign: { algorithm: 'HS256' }, verify: cachedVerifyOptions })
  )
  const verifyAllowingExpired = createVerifier({ key: secret, ...verifyOptions, ignoreExpiration: true })

  const tokens = new AccessTokens(
    {
      sign: (claims) => fastify.jwt.sign(claims),
      verify: (token) => fastify.jwt.verify(token),
      verifyAllowingExpired
    },
    config.JWT_ISSUER,
    config.ACCESS_TOKEN_TTL
  )
  fastify.decorate('tokens', tokens)

  // Callback hooks: the every-request path allocates no promise.
  const authenticateWith = (allowExpired: boolean) =>
    function (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) {
      let token: string | undefined
      try {
        token = tokenOf(request.raw)
      } catch (error) {
        return done(error as Error)
      }
      if (token === undefined) return done(authorizationAbsent())
      const result = tokens.verify(token, { allowExpired })
      if (!result.ok) return done(invalidToken(result.reason))
      request.user = result.claims
      done()
    }
  fastify.decorate('authenticate', authenticateWith(false))
  fastify.decorate('authenticateAllowingExpired', authenticateWith(true))

  const roles = new RoleCache(async (name) => (await store.users.find(name))?.role)
  fastify.decorate('requireRole', (required: Role) => async (request: FastifyRequest) => {
    const role = await roles.get(request.user.user_id)
    if (role === undefined) throw forbidden('The user of this token no longer exists.')
    if (rank[role] < rank[required]) throw forbidden(`This needs the role ${required} or higher; yours is ${role}.`)
  })
}

/**
 * fast-jwt warns about any custom cache key, because one that collides could hand one user's
 * verified claims to another. The token itself cannot collide, so that one warning is dropped.
 */
async function withoutCacheKeyWarning<T>(register: () => PromiseLike<T>): Promise<T> {
  const emitWarning = process.emitWarning
  process.emitWarning = function (this: NodeJS.Process, warning: string | Error, ...rest: unknown[]) {
    if ((rest[0] as { code?: unknown } | undefined)?.code === 'FAST_JWT_CACHE_KEY_BUILDER_SECURITY_RISK') return
    return (emitWarning as (...args: unknown[]) => void).call(this, warning, ...rest)
  } as typeof process.emitWarning
  try {
    return await register()
  } finally {
    process.emitWarning = emitWarning
  }
}

export default fp(authentication, {
  name: 'authentication',
  fastify: '5.x',
  decorators: { fastify: ['config', 'store'] }
})
