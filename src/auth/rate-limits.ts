import rateLimit, { normalizeIP } from '@fastify/rate-limit'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Config } from '../config.js'
import { AppError } from '../app-error.js'

type Hook = (request: FastifyRequest, reply: FastifyReply) => Promise<void>
type Limiter = ReturnType<FastifyInstance['createRateLimit']>

export interface AuthLimits {
  /** onRequest of POST /auth: every attempt, per client address, before the body is read. */
  login: Hook
  /** preValidation of POST /auth: every attempt per (address, username); then the username's failures so far, for an address that has failed. */
  loginAs: Hook
  /** Counts a wrong password (or an unknown username) against the username, and against this address for it. */
  failed(request: FastifyRequest): Promise<void>
  /** onRequest of POST /auth/refresh: per client address, before the token is checked. */
  refresh: Hook
}

const MINUTE = 60_000

/**
 * The limits that keep anyone from guessing passwords quickly without letting a third party lock an
 * owner out. Every attempt counts per address and per (address, username), so one address guesses
 * slowly. Per username only failures count, with a much higher limit: once it is reached, every
 * address that has failed for that username waits out the window, so guesses spread over many
 * addresses stay slow (one each per window). An address that has not failed for it is never refused
 * by that limit: the owner's right password, from an address of their own, always works, however
 * many strangers keep guessing, and pipeline workers logging in as one user never trip anything by
 * succeeding.
 *
 * @fastify/rate-limit can read a counter without counting, which is all that counting only failures
 * needs: the username's failures are read before the password is checked and counted after it
 * fails. Counters live in this process, in LRU maps of 5000 keys each.
 */
export async function authLimits(fastify: FastifyInstance, config: Config): Promise<AuthLimits> {
  await fastify.register(rateLimit, { global: false })
  const perAddress = fastify.createRateLimit({
    max: config.AUTH_ADDRESS_RATE_LIMIT ?? config.AUTH_RATE_LIMIT,
    timeWindow: MINUTE
  })
  const perAddressAndUsername = fastify.createRateLimit({
    max: config.AUTH_RATE_LIMIT,
    timeWindow: MINUTE,
    // The address never holds a newline, so the first one separates it from any username.
    keyGenerator: (request) => `${normalizeIP(request.ip)}\n${usernameOf(request)}`
  })
  const failuresPerUsername = fastify.createRateLimit({
    max: config.AUTH_USER_FAILURE_LIMIT,
    timeWindow: config.AUTH_USER_FAILURE_WINDOW * 1000,
    keyGenerator: (request) => usernameOf(request) ?? ''
  })
  /** Read as "has this address failed for this username within the window": its one allowed failure is spent. */
  const failuresPerAddressAndUsername = fastify.createRateLimit({
    max: 1,
    timeWindow: config.AUTH_USER_FAILURE_WINDOW * 1000,
    keyGenerator: (request) => `${normalizeIP(request.ip)}\n${usernameOf(request) ?? ''}`
  })
  const refreshPerAddress = fastify.createRateLimit({ max: config.REFRESH_RATE_LIMIT, timeWindow: MINUTE })

  return {
    login: async (request, reply) => counted(reply, await perAddress(request), 'login attempts'),
    loginAs: async (request, reply) => {
      if (usernameOf(request) === undefined) return
      counted(reply, await perAddressAndUsername(request), 'login attempts')
      const failures = await failuresPerUsername(request, { increment: false })
      if (failures.isAllowed || failures.remaining > 0) return
      const failedHere = await failuresPerAddressAndUsername(request, { increment: false })
      if (!failedHere.isAllowed && failedHere.remaining === 0) {
        // Free again when either the username's failures fall below the limit or this address's failure ages out.
        throw tooMany(reply, 'failed logins for this username', Math.min(failures.ttlInSeconds, failedHere.ttlInSeconds))
      }
    },
    failed: async (request) => {
      await failuresPerUsername(request)
      await failuresPerAddressAndUsername(request)
    },
    refresh: async (request, reply) => counted(reply, await refreshPerAddress(request), 'refresh requests')
  }
}

/** The username of a login body not yet validated: a string, or undefined. */
function usernameOf(request: FastifyRequest): string | undefined {
  const username = (request.body as { username?: unknown } | null | undefined)?.username
  return typeof username === 'string' ? username : undefined
}

/** After a counting call: 429 once the count is past the limit. */
function counted(reply: FastifyReply, result: Awaited<ReturnType<Limiter>>, what: string) {
  if (!result.isAllowed && result.isExceeded) throw tooMany(reply, what, result.ttlInSeconds)
}

/** 429 TooManyRequests, with Retry-After. */
function tooMany(reply: FastifyReply, what: string, retryAfterSeconds: number) {
  reply.header('retry-after', retryAfterSeconds)
  return new AppError(429, 'TooManyRequests', [`Too many ${what}; try again in ${retryAfterSeconds} seconds.`])
}
