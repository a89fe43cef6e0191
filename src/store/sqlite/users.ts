import type Database from 'better-sqlite3'
import type { Role } from '../../../schemas/auth.js'
import type { NewUser, UserRecord } from '../port.js'

interface UserRow {
  name: string
  password_hash: string
  role: Role
  created_at: number
  refresh_token_hash: string | null
  refresh_token_expires_at: number | null
}

const toUser = (row: UserRow): UserRecord => ({
  name: row.name,
  passwordHash: row.password_hash,
  role: row.role,
  createdAt: row.created_at,
  refreshTokenHash: row.refresh_token_hash,
  refreshTokenExpiresAt: row.refresh_token_expires_at
})

/** Users and their refresh tokens. */
export class SqliteUsers {
  private readonly statements

  constructor(db: Database.Database) {
    this.statements = {
      insert: db.prepare(
        `INSERT INTO users (name, password_hash, role, created_at)
         VALUES (@name, @passwordHash, @role, @createdAt) ON CONFLICT (name) DO NOTHING`
      ),
      find: db.prepare<[string], UserRow>('SELECT * FROM users WHERE name = ?'),
      list: db.prepare<[], UserRow>('SELECT * FROM users ORDER BY name'),
      count: db.prepare<[], { n: number }>('SELECT count(*) AS n FROM users'),
      setRole: db.prepare('UPDATE users SET role = ? WHERE name = ?'),
      setPasswordHash: db.prepare(
        `UPDATE users SET password_hash = ?, refresh_token_hash = NULL, refresh_token_expires_at = NULL
         WHERE name = ?`
      ),
      remove: db.prepare('DELETE FROM users WHERE name = ?'),
      saveRefreshToken: db.prepare('UPDATE users SET refresh_token_hash = ?, refresh_token_expires_at = ? WHERE name = ?')
    }
  }

  create(user: NewUser): boolean {
    return this.statements.insert.run(user).changes === 1
  }

  find(name: string): UserRecord | null {
    const row = this.statements.find.get(name)
    return row === undefined ? null : toUser(row)
  }

  list(): UserRecord[] {
    return this.statements.list.all().map(toUser)
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
