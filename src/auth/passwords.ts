import { randomBytes, timingSafeEqual, type ScryptOptions } from 'node:crypto'
import { ScryptThreads } from './scrypt-threads.js'

/**
 * The setting of OWASP's equivalent minimums that needs the least memory (8 MiB a hash, the work of
 * N = 2^14 with p = 5 in half its memory); stored with each hash, so it can change.
 */
export const PASSWORD_COST = { N: 2 ** 13, r: 8, p: 10 }
const KEY_LENGTH = 32

type Cost = typeof PASSWORD_COST

/** Every hash of the process, logins and commands alike, is made by these threads. */
const threads = new ScryptThreads()
export const HASHING_THREADS = threads.size

function derive(password: string, salt: Buffer, cost: Cost): Promise<Buffer> {
  const options: ScryptOptions = { ...cost, maxmem: 256 * cost.N * cost.r }
  return threads.derive({ password: password.normalize('NFC'), salt, keyLength: KEY_LENGTH, options })
}

/** `cost` is for test fixtures only: verification always uses the parameters stored with the hash. */
export async function hashPassword(password: string, cost: Cost = PASSWORD_COST): Promise<string> {
  const salt = randomBytes(16)
  const key = await derive(password, salt, cost)
  return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64'), key.toString('base64')].join('$')
}

/**
 * What an unknown user's attempt costs: that of the last hash that matched (older hashes keep their
 * cost), so that after a change of PASSWORD_COST timing still does not tell which usernames exist.
 */
let matchedCost: Cost = PASSWORD_COST

/** With no stored hash (unknown user) it does the same work, with a random salt, and answers false. */
export async function verifyPassword(password: string, stored: string | undefined): Promise<boolean> {
  if (stored === undefined) {
    await derive(password, randomBytes(16), matchedCost)
    return false
  }
  const parsed = parse(stored)
  if (parsed === undefined) return false
  const matched = timingSafeEqual(await derive(password, parsed.salt, parsed.cost), parsed.key)
  if (matched) matchedCost = parsed.cost
  return matched
}

function parse(stored: string) {
  const [scheme, N, r, p, salt, key] = stored.split('$')
  if (scheme !== 'scrypt' || salt === undefined || key === undefined) return undefined
  const cost = { N: Number(N), r: Number(r), p: Number(p) }
  if (!Object.values(cost).every(Number.isSafeInteger)) return undefined
  const keyBytes = Buffer.from(key, 'base64')
  if (keyBytes.length !== KEY_LENGTH) return undefined
  return { cost, salt: Buffer.from(salt, 'base64'), key: keyBytes }
}
