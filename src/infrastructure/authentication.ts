import fastifyJwt from '@fastify/jwt'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { createVerifier } from 'fast-jwt'
import fp from 'fastify-plugin'
import type { AccessClaims, Role } from '../../schemas/auth.js'
import { AccessTokens } from '../auth/access-tokens.js'
import { tokenOf } from '../auth/authorization-header.js'
import { RoleCache } from '../auth/role-cache.js'
import { authorizationAbsent, forbidden, invalidToken } from '../errors.js'

declare module '@fastify/jwt' {
  interface FastifyJWT {
    payload: AccessClaims
    user: AccessClaims
  }
}

type RequestHook = (request: FastifyRequest) => Promise<void>

declare module 'fastify' {
  interface FastifyInstance {
    tokens: AccessTokens
    /** onRequest hook of every `/v1` route: a valid, unexpired access token, or 401. */
    authenticate: RequestHook
    /** onRequest hook of `/auth/refresh`: our signature and issuer, but the token may be expired. */
    authenticateAllowingExpired: RequestHook
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
  await fastify.register(fastifyJwt, { secret, sign: { algorithm: 'HS256' }, verify: verifyOptions })
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

  const authenticateWith = (allowExpired: boolean) =>
    async function (request: FastifyRequest) {
      const token = tokenOf(request.raw)
      if (token === undefined) throw authorizationAbsent()
      const result = tokens.verify(token, { allowExpired })
      if (!result.ok) throw invalidToken(result.reason)
      request.user = result.claims
    }
  fastify.decorate('authenticate', authenticateWith(false))
  fastify.decorate('authenticateAllowingExpired', authenticateWith(true))

  const roles = new RoleCache(async (name) => (await store.findUser(name))?.role)
  fastify.decorate('requireRole', (required: Role) => async (request: FastifyRequest) => {
    const role = await roles.get(request.user.user_id)
    if (role === undefined) throw forbidden('The user of this token no longer exists.')
    if (rank[role] < rank[required]) throw forbidden(`This needs the role ${required} or higher; yours is ${role}.`)
  })
}

export default fp(authentication, {
  name: 'authentication',
  fastify: '5.x',
  decorators: { fastify: ['config', 'store'] }
})
