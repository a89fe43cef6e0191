import { randomBytes, timingSafeEqual, type ScryptOptions } from 'node:crypto'
import { ScryptThreads } from './scrypt-threads.js'

/**
 * scrypt with N = 2^14, r = 8, p = 5: one of OWASP's equivalent minimum settings, and the one with
 * the least memory (16 MiB a hash). The parameters are stored with each hash, so they
 * can change without invalidating existing passwords.
 */
export const PASSWORD_COST = { N: 2 ** 14, r: 8, p: 5 }
const KEY_LENGTH = 32

type Cost = typeof PASSWORD_COST

/** Every hash of the process, logins and commands alike, is made by these threads. */
const threads = new ScryptThreads()

/** How many passwords this process hashes at once at most. */
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

/** A well-formed hash of a random password, made on first need: unknown users cost the same time as known ones. */
let decoy: Promise<string> | undefined
const decoyHash = () => (decoy ??= hashPassword(randomBytes(16).toString('hex')))

/**
 * True when `password` matches `stored`. With no stored hash (unknown user) it still does the full
 * work against a decoy and answers false, so timing does not tell which usernames exist.
 */
export async function verifyPassword(password: string, stored: string | undefined): Promise<boolean> {
  const parsed = parse(stored ?? (await decoyHash()))
  if (parsed === undefined) return false
  const key = await derive(password, parsed.salt, parsed.cost)
  return timingSafeEqual(key, parsed.key) && stored !== undefined
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
