import type { Collection, Db, Document } from 'mongodb'
import type { Role } from '../../../schemas/auth.js'
import type { NewUserRecord, UserRecord } from '../../domain/records.js'
import type { Adapter } from '../guarded-store.js'
import type { UserCollection } from '../port.js'
import { millisIn } from './documents.js'
import { isDuplicateKey } from './driver-errors.js'
import { COLLECTIONS } from './indexes.js'

/** The stored shape, which only this service writes: times as BSON dates, the refresh token as one sub-document. */
type UserDocument = { name: string; password_hash: string; role: Role; created_at: Date; refresh_token: { hash: string; expires_at: Date } | null }

const toUser = (document: Document): UserRecord => {
  const user = document as UserDocument
  return {
    name: user.name,
    password_hash: user.password_hash,
    role: user.role,
    created_at: millisIn(user.created_at, 0),
    refresh_token_hash: user.refresh_token?.hash ?? null,
    refresh_token_expires_at: user.refresh_token === null ? null : millisIn(user.refresh_token.expires_at, 0)
  }
}

export class MongoUsers implements Adapter<UserCollection> {
  private readonly users: Collection

  constructor(db: Db) {
    this.users = db.collection(COLLECTIONS.users)
  }

  /** The unique index on name decides between concurrent creations: the losers get E11000. */
  async create(user: NewUserRecord): Promise<boolean> {
    try {
      const { name, password_hash, role } = user
      await this.users.insertOne({ name, password_hash, role, created_at: new Date(user.created_at), refresh_token: null } satisfies UserDocument)
      return true
    } catch (error) {
      if (isDuplicateKey(error)) return false
      throw error
    }
  }

  async find(name: string): Promise<UserRecord | null> {
    const document = await this.users.findOne({ name })
    return document === null ? null : toUser(document)
  }

  async list(): Promise<UserRecord[]> {
    return (await this.users.find({}, { sort: { name: 1 } }).toArray()).map(toUser)
  }

  count = () => this.users.countDocuments({})

  setRole = (name: string, role: Role) => this.update(name, { role })

  setPasswordHash = (name: string, passwordHash: string) => this.update(name, { password_hash: passwordHash, refresh_token: null })

  saveRefreshToken = (name: string, tokenHash: string, expiresAt: number) =>
    this.update(name, { refresh_token: { hash: tokenHash, expires_at: new Date(expiresAt) } })

  remove = async (name: string) => (await this.users.deleteOne({ name })).deletedCount === 1

  private update = async (name: string, fields: Document) => (await this.users.updateOne({ name }, { $set: fields })).matchedCount === 1
}
