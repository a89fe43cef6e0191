import rateLimit, { normalizeIP } from '@fastify/rate-limit'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Config } from '../config.js'
import { AppError } from '../app-error.js'
import { clockStore } from './clock-store.js'

type Hook = (request: FastifyRequest, reply: FastifyReply) => Promise<void>
type Limiter = ReturnType<FastifyInstance['createRateLimit']>

export interface AuthLimits {
  /** onRequest of POST /auth: refused before the body is read when the address has no attempt left. */
  login: Hook
  /** preValidation of POST /auth: likewise per (address, username); then the username's failures so far, for an address that has failed. */
  loginAs: Hook
  /** The handler of POST /auth runs its `login` through this: it counts as failed while it runs, and after unless it logs in. */
  attempt<T>(request: FastifyRequest, reply: FastifyReply, login: () => Promise<T>): Promise<T>
  /** Counts a wrong password (or an unknown username) against the username, and against this address for it. */
  failed(request: FastifyRequest): Promise<void>
  /** onResponse of POST /auth: an answer given before the handler (a malformed body) is a failed attempt too. */
  answered: Hook
  /** onRequest of POST /auth/refresh: per client address, before the token is checked. */
  refresh: Hook
}

const MINUTE = 60_000

/**
 * Guessing passwords stays slow without letting strangers, or an owner's own logins, lock the owner out.
 * Every attempt that does not log in counts per address and per (address, username), and counts as
 * failed from its start, so a burst sent at once cannot outrun the count; a successful login counts
 * nowhere (pipeline workers behind one NAT), nor does a 429. Per username only wrong credentials
 * count, with a higher limit past which only the addresses that failed for that username wait: the
 * owner's right password from an address of their own always works. Counters are read without
 * counting before the password is checked, counted after it fails, and kept in this process in LRU
 * maps of 5000 keys, on the app's clock.
 */
export async function authLimits(fastify: FastifyInstance, config: Config): Promise<AuthLimits> {
  await fastify.register(rateLimit, { global: false, store: clockStore(fastify.clock) })
  const failureWindow = config.AUTH_USER_FAILURE_WINDOW * 1000
  const perAddress = fastify.createRateLimit({ max: config.AUTH_ADDRESS_RATE_LIMIT ?? config.AUTH_RATE_LIMIT, timeWindow: MINUTE, keyGenerator: addressKey })
  const perAddressAndUsername = fastify.createRateLimit({ max: config.AUTH_RATE_LIMIT, timeWindow: MINUTE, keyGenerator: addressAndUsernameKey })
  const usernameKey = (request: FastifyRequest) => usernameOf(request) ?? ''
  const failuresPerUsername = fastify.createRateLimit({ max: config.AUTH_USER_FAILURE_LIMIT, timeWindow: failureWindow, keyGenerator: usernameKey })
  /** Read as "has this address failed for this username within the window": its one allowed failure is spent. */
  const failuresPerAddressAndUsername = fastify.createRateLimit({ max: 1, timeWindow: failureWindow, keyGenerator: addressAndUsernameKey })
  const refreshPerAddress = fastify.createRateLimit({ max: config.REFRESH_RATE_LIMIT, timeWindow: MINUTE })

  const underWay = new AttemptsUnderWay()
  /** The requests whose attempt the handler counted (or let off): the answer does not count it again. */
  const counted = new WeakSet<FastifyRequest>()
  const limitsOf = (request: FastifyRequest) => {
    const limits = [{ limiter: perAddress, key: `address\n${addressKey(request)}` }]
    if (usernameOf(request) !== undefined) limits.push({ limiter: perAddressAndUsername, key: `user\n${addressAndUsernameKey(request)}` })
    return limits
  }
  /** 429 when the failures so far, and the attempts under way `ahead` of this one, leave it no room. */
  const refuseWhenSpent = async (request: FastifyRequest, reply: FastifyReply, limiter: Limiter, ahead: number) => {
    const failures = await limiter(request, { increment: false })
    if (failures.isAllowed) return
    if (failures.remaining - ahead <= 0) throw tooMany(reply, 'login attempts', Math.max(1, failures.ttlInSeconds))
  }
  const countFailed = async (request: FastifyRequest) => {
    for (const { limiter } of limitsOf(request)) await limiter(request)
  }

  return {
    login: async (request, reply) => {
      const { limiter, key } = limitsOf(request)[0]!
      await refuseWhenSpent(request, reply, limiter, underWay.count(key))
    },
    loginAs: async (request, reply) => {
      if (usernameOf(request) === undefined) return
      const { key } = limitsOf(request)[1]!
      await refuseWhenSpent(request, reply, perAddressAndUsername, underWay.count(key))
      const failures = await failuresPerUsername(request, { increment: false })
      if (failures.isAllowed || failures.remaining > 0) return
      const failedHere = await failuresPerAddressAndUsername(request, { increment: false })
      if (!failedHere.isAllowed && failedHere.remaining === 0) {
        // Free again when either the username's failures fall below the limit or this address's failure ages out.
        throw tooMany(reply, 'failed logins for this username', Math.min(failures.ttlInSeconds, failedHere.ttlInSeconds))
      }
    },
    attempt: async (request, reply, login) => {
      counted.add(request)
      const limits = limitsOf(request)
      // Joined before anything is awaited: of attempts arriving together, each sees those ahead of it.
      const places = limits.map(({ key }) => underWay.join(key))
      try {
        for (const [index, { limiter }] of limits.entries()) await refuseWhenSpent(request, reply, limiter, places[index]! - 1)
        try {
          return await login()
        } catch (error) {
          await countFailed(request)
          throw error
        }
      } finally {
        for (const { key } of limits) underWay.leave(key)
      }
    },
    failed: async (request) => {
      await failuresPerUsername(request)
      await failuresPerAddressAndUsername(request)
    },
    answered: async (request, reply) => {
      if (counted.has(request) || reply.statusCode === 200 || reply.statusCode === 429) return
      await countFailed(request)
    },
    refresh: async (request, reply) => {
      const result = await refreshPerAddress(request)
      if (!result.isAllowed && result.isExceeded) throw tooMany(reply, 'refresh requests', result.ttlInSeconds)
    }
  }
}

/** Login attempts under way, by limit key: each counts as failed until it has logged in. */
class AttemptsUnderWay {
  readonly #counts = new Map<string, number>()

  count(key: string): number {
    return this.#counts.get(key) ?? 0
  }

  /** Adds an attempt; its place among those under way, from 1. */
  join(key: string): number {
    const place = this.count(key) + 1
    this.#counts.set(key, place)
    return place
  }

  leave(key: string) {
    const left = this.count(key) - 1
    if (left <= 0) this.#counts.delete(key)
    else this.#counts.set(key, left)
  }
}

const addressKey = (request: FastifyRequest) => normalizeIP(request.ip)
// The address never holds a newline, so the first one separates it from any username.
const addressAndUsernameKey = (request: FastifyRequest) => `${normalizeIP(request.ip)}\n${usernameOf(request) ?? ''}`

/** The username of a login body not yet validated: a string, or undefined. */
function usernameOf(request: FastifyRequest): string | undefined {
  const username = (request.body as { username?: unknown } | null | undefined)?.username
  return typeof username === 'string' ? username : undefined
}

function tooMany(reply: FastifyReply, what: string, retryAfterSeconds: number) {
  reply.header('retry-after', retryAfterSeconds)
  return new AppError(429, 'TooManyRequests', [`Too many ${what}; try again in ${retryAfterSeconds} seconds.`])
}
