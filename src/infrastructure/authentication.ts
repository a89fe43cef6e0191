import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import fastifyJwt from '@fastify/jwt'
import fp from 'fastify-plugin'
import type { AccessClaims, Role } from '../../schemas/auth.js'
import { authorizationAbsent, forbidden, invalidToken } from '../app-error.js'
import { AccessTokens, accessTokenVerifyOptions } from '../auth/access-tokens.js'
import { tokenOf } from '../auth/authorization-header.js'
import { RoleCache } from '../auth/role-cache.js'

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

declare module '@fastify/jwt' {
  interface FastifyJWT {
    payload: AccessClaims
    user: AccessClaims
  }
}

const rank: Record<Role, number> = { reader: 0, writer: 1, admin: 2 }

// @fastify/jwt registered once; the hooks use its one verifier on the app's clock, not `request.jwtVerify` (two decodes, an async waterfall).
async function authentication(fastify: FastifyInstance) {
  const { config, store, clock } = fastify
  const secret = config.JWT_SECRET
  if (secret === undefined) throw new Error('JWT_SECRET must be resolved before the app is built')
  const settings = { secret, issuer: config.JWT_ISSUER, ttlSeconds: config.ACCESS_TOKEN_TTL, issuedAtToleranceSeconds: config.TOKEN_IAT_TOLERANCE_S }
  // It also decorates request.user, which the hooks set.
  await fastify.register(fastifyJwt, { secret, sign: { algorithm: 'HS256' }, verify: accessTokenVerifyOptions(settings) })
  const { jwt } = fastify
  const tokens = new AccessTokens(
    settings,
    { sign: (claims) => jwt.sign(claims), verify: (token) => jwt.verify(token), decode: (token) => jwt.decode(token) },
    clock
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

  const roles = new RoleCache(async (name) => (await store.users.find(name))?.role, clock)
  fastify.decorate('requireRole', (required: Role) => async (request: FastifyRequest) => {
    const role = await roles.get(request.user.user_id)
    if (role === undefined) throw forbidden('The user of this token no longer exists.')
    if (rank[role] < rank[required]) throw forbidden(`This needs the role ${required} or higher; yours is ${role}.`)
  })
}

export default fp(authentication, {
  name: 'authentication',
  fastify: '5.x',
  decorators: { fastify: ['config', 'store', 'clock'] },
  dependencies: ['error-handler']
})
