import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto'

/**
 * scrypt with N = 2^15, r = 8 (32 MiB, tens of milliseconds a hash). The parameters are stored with
 * each hash, so they can be raised later without invalidating existing passwords.
 */
export const PASSWORD_COST = { N: 2 ** 15, r: 8, p: 1 }
const KEY_LENGTH = 32

type Cost = typeof PASSWORD_COST

function derive(password: string, salt: Buffer, cost: Cost): Promise<Buffer> {
  const options: ScryptOptions = { ...cost, maxmem: 256 * cost.N * cost.r }
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, KEY_LENGTH, options, (error, key) => (error ? reject(error) : resolve(key)))
  )
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
