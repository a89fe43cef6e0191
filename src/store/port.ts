import type { Role } from '../../schemas/auth.js'

/** A user as the store keeps it. Times are milliseconds since the epoch. */
export interface UserRecord {
  name: string
  passwordHash: string
  role: Role
  createdAt: number
  /** SHA-256 (hex) of the user's current refresh token; null until the first login. */
  refreshTokenHash: string | null
  refreshTokenExpiresAt: number | null
}

export type NewUser = Pick<UserRecord, 'name' | 'passwordHash' | 'role' | 'createdAt'>

/**
 * The storage port. Routes and commands see only this interface; every query language lives in
 * exactly one adapter. All methods may reject with StoreUnavailableError.
 */
export interface Store {
  readonly kind: 'sqlite' | 'mongodb'
  /** Resolves when the store answers; rejects with StoreUnavailableError otherwise. */
  ping(): Promise<void>
  close(): Promise<void>

  /** False when a user of that name exists already. */
  createUser(user: NewUser): Promise<boolean>
  findUser(name: string): Promise<UserRecord | null>
  listUsers(): Promise<UserRecord[]>
  countUsers(): Promise<number>
  /** The following return false when there is no such user. */
  setRole(name: string, role: Role): Promise<boolean>
  /** Also drops the user's refresh token: a new password ends the old sessions' refreshes. */
  setPasswordHash(name: string, passwordHash: string): Promise<boolean>
  removeUser(name: string): Promise<boolean>
  /** Replaces the user's refresh token, so the previous one stops working. */
  saveRefreshToken(name: string, tokenHash: string, expiresAt: number): Promise<boolean>
}

/** The store cannot be reached or is locked: the request may succeed later (503, not 500). */
export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError'
}
