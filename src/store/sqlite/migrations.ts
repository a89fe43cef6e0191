/**
 * The SQLite schema, one entry per version (`PRAGMA user_version`). Append; never edit a released
 * entry: stores in the field have applied it already.
 */
export const migrations: readonly string[] = [
  `CREATE TABLE users (
     name                     TEXT PRIMARY KEY,
     password_hash            TEXT NOT NULL,
     role                     TEXT NOT NULL CHECK (role IN ('reader', 'writer', 'admin')),
     created_at               INTEGER NOT NULL,
     refresh_token_hash       TEXT,
     refresh_token_expires_at INTEGER
   ) STRICT`
]
