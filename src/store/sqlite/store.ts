import type Database from 'better-sqlite3'
import type { Role } from '../../../schemas/auth.js'
import { StoreUnavailableError, type NewUser, type Store, type UserRecord } from '../port.js'
import { asStoreError, openDatabase } from './database.js'

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

/** The embedded store: one SQLite file, statements prepared once. */
export class SqliteStore implements Store {
  readonly kind = 'sqlite'
  private readonly statements

  private constructor(private readonly db: Database.Database) {
    this.statements = {
      ping: db.prepare('PRAGMA user_version'),
      insertUser: db.prepare(
        `INSERT INTO users (name, password_hash, role, created_at)
         VALUES (@name, @passwordHash, @role, @createdAt) ON CONFLICT (name) DO NOTHING`
      ),
      findUser: db.prepare<[string], UserRow>('SELECT * FROM users WHERE name = ?'),
      listUsers: db.prepare<[], UserRow>('SELECT * FROM users ORDER BY name'),
      countUsers: db.prepare<[], { n: number }>('SELECT count(*) AS n FROM users'),
      setRole: db.prepare('UPDATE users SET role = ? WHERE name = ?'),
      setPasswordHash: db.prepare(
        `UPDATE users SET password_hash = ?, refresh_token_hash = NULL, refresh_token_expires_at = NULL
         WHERE name = ?`
      ),
      removeUser: db.prepare('DELETE FROM users WHERE name = ?'),
      saveRefreshToken: db.prepare(
        'UPDATE users SET refresh_token_hash = ?, refresh_token_expires_at = ? WHERE name = ?'
      )
    }
  }

  static open(path: string): SqliteStore {
    try {
      return new SqliteStore(openDatabase(path))
    } catch (error) {
      throw asStoreError(error)
    }
  }

  /** Runs synchronous SQLite work behind the port's promise interface, mapping store errors. */
  private async run<T>(work: () => T): Promise<T> {
    if (!this.db.open) throw new StoreUnavailableError('SQLite store is closed')
    try {
      return work()
    } catch (error) {
      throw asStoreError(error)
    }
  }

  ping() {
    return this.run(() => void this.statements.ping.get())
  }

  async close() {
    if (this.db.open) this.db.close()
  }

  createUser(user: NewUser) {
    return this.run(() => this.statements.insertUser.run(user).changes === 1)
  }

  findUser(name: string) {
    return this.run(() => {
      const row = this.statements.findUser.get(name)
      return row === undefined ? null : toUser(row)
    })
  }

  listUsers() {
    return this.run(() => this.statements.listUsers.all().map(toUser))
  }

  countUsers() {
    return this.run(() => this.statements.countUsers.get()?.n ?? 0)
  }

  setRole(name: string, role: Role) {
    return this.run(() => this.statements.setRole.run(role, name).changes === 1)
  }

  setPasswordHash(name: string, passwordHash: string) {
    return this.run(() => this.statements.setPasswordHash.run(passwordHash, name).changes === 1)
  }

  removeUser(name: string) {
    return this.run(() => this.statements.removeUser.run(name).changes === 1)
  }

  saveRefreshToken(name: string, tokenHash: string, expiresAt: number) {
    return this.run(() => this.statements.saveRefreshToken.run(tokenHash, expiresAt, name).changes === 1)
  }
}
