import { createHash, randomUUID, timingSafeEqual } from 'node:crypto'

/** Refresh tokens are random UUID v4 strings; the store keeps only their SHA-256. */
export const newRefreshToken = (): string => randomUUID()

export const hashRefreshToken = (token: string): string => createHash('sha256').update(token).digest('hex')

/** Constant-time comparison of a presented token with the stored hash. */
export function refreshTokenMatches(presented: string, storedHash: string): boolean {
  const stored = Buffer.from(storedHash, 'hex')
  const candidate = createHash('sha256').update(presented).digest()
  return stored.length === candidate.length && timingSafeEqual(stored, candidate)
}
