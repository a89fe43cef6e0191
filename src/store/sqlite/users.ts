import type Database from 'better-sqlite3'
import type { Role } from '../../../schemas/auth.js'
import type { NewUserRecord, UserRecord } from '../../domain/records.js'
import type { Adapter } from '../guarded-store.js'
import type { UserCollection } from '../port.js'

/** Users and their refresh tokens; a row is the record. */
export class SqliteUsers implements Adapter<UserCollection> {
  private readonly statements

  constructor(db: Database.Database) {
    this.statements = {
      insert: db.prepare<NewUserRecord>(
        `INSERT INTO users (name, password_hash, role, created_at)
         VALUES (@name, @password_hash, @role, @created_at) ON CONFLICT (name) DO NOTHING`
      ),
      find: db.prepare<[string], UserRecord>('SELECT * FROM users WHERE name = ?'),
      list: db.prepare<[], UserRecord>('SELECT * FROM users ORDER BY name'),
      count: db.prepare<[], { n: number }>('SELECT count(*) AS n FROM users'),
      setRole: db.prepare<[Role, string]>('UPDATE users SET role = ? WHERE name = ?'),
      setPasswordHash: db.prepare<[string, string]>(
        `UPDATE users SET password_hash = ?, refresh_token_hash = NULL, refresh_token_expires_at = NULL
         WHERE name = ?`
      ),
      remove: db.prepare<[string]>('DELETE FROM users WHERE name = ?'),
      saveRefreshToken: db.prepare<[string, number, string]>(
        'UPDATE users SET refresh_token_hash = ?, refresh_token_expires_at = ? WHERE name = ?'
      )
    }
  }

  create(user: NewUserRecord): boolean {
    const { name, password_hash, role, created_at } = user
    return this.statements.insert.run({ name, password_hash, role, created_at }).changes === 1
  }

  find(name: string): UserRecord | null {
    return this.statements.find.get(name) ?? null
  }

  list(): UserRecord[] {
    return this.statements.list.all()
  }

  count(): number {
    return this.statements.count.get()?.n ?? 0
  }

  setRole(name: string, role: Role): boolean {
    return this.statements.setRole.run(role, name).changes === 1
  }

  setPasswordHash(name: string, passwordHash: string): boolean {
    return this.statements.setPasswordHash.run(passwordHash, name).changes === 1
  }

  remove(name: string): boolean {
    return this.statements.remove.run(name).changes === 1
  }

  saveRefreshToken(name: string, tokenHash: string, expiresAt: number): boolean {
    return this.statements.saveRefreshToken.run(tokenHash, expiresAt, name).changes === 1
  }
}
