import type Database from 'better-sqlite3'
import { existsSync, mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { StoreMissingError, StoreOutdatedError, StoreUnavailableError } from '../port.js'
import type { WhenMissing } from '../when-missing.js'
import { createPrivateFile } from '../../private-file.js'
import { keptAlive, openKeptDatabase } from './native-lifetimes.js'
import { migrations } from './migrations.js'

/**
 * `read-write` migrates the file; `read-only` (a command that only reads) has SQLite refuse every
 * write, and refuses an older schema rather than upgrade it (the upgrade may hold the write lock
 * long under the old release's instances: a serving instance's job).
 */
export type Access = 'read-write' | 'read-only'

/**
 * SQLite's own page cache of a connection, in KiB (better-sqlite3 builds it with 16 MB). The file's
 * pages stay in the operating system's cache, so a larger one reads no faster and only holds memory.
 */
export const PAGE_CACHE_KIB = 4096

/** Opens and migrates the file: WAL lets readers run beside the writer; `synchronous = NORMAL` loses no commit to a crash of the process. */
export function openDatabase(
  path: string,
  busyTimeoutMs: number,
  createDatabase?: (path: string) => Database.Database,
  whenMissing: WhenMissing = 'create',
  access: Access = 'read-write'
): Database.Database {
  const inMemory = path === ':memory:'
  const readOnly = access === 'read-only' && !inMemory
  if (!inMemory && (whenMissing === 'refuse' || readOnly) && !existsSync(path)) {
    throw new StoreMissingError(`There is no SQLite store at ${path}: check TRACER_DB`)
  }
  if (!inMemory && !readOnly) {
    mkdirSync(dirname(path), { recursive: true })
    // The store holds password hashes: made 0600 first, its -wal and -shm files take the same mode.
    if (whenMissing !== 'refuse') createPrivateFile(path)
  }
  const make = createDatabase ?? ((file: string) => openKeptDatabase(file, readOnly ? { readonly: true, fileMustExist: true } : {}))
  const db = keptAlive(make(path))
  try {
    db.exec(`PRAGMA cache_size = -${PAGE_CACHE_KIB}`)
    // busy_timeout: how long a statement waits, synchronously, for another process's lock (see store.ts).
    if (readOnly) {
      db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}; PRAGMA foreign_keys = ON;`)
      refuseOutdated(db, path)
    } else {
      db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;`)
      migrate(db, whenMissing === 'create-for-demo')
    }
    return db
  } catch (error) {
    db.close()
    throw error
  }
}

/** A read-only opening: the schema must be this code's, neither older nor newer. */
function refuseOutdated(db: Database.Database, path: string): void {
  const version = db.pragma('user_version', { simple: true }) as number
  if (version > migrations.length) throw newerStore(version)
  if (version < migrations.length) {
    throw new StoreOutdatedError(
      `The store at ${path} has schema version ${version}, older than this release's (${migrations.length}), and a command that only reads does not upgrade it: ` +
        'start this release with `tracer serve` on it once (it upgrades the store), then run the command again.'
    )
  }
}

const newerStore = (version: number) =>
  new Error(`The store's schema is version ${version}, newer than this service knows (${migrations.length}); upgrade the service.`)

/** The `settings` row a server's start writes into a store it creates, in the transaction that creates it. */
export const DEMO_AWAITED = { name: 'demo_data', value: 'awaited' } as const

/** The missing migrations in one IMMEDIATE transaction; a store a server's start creates is marked in it as awaiting its demo data. */
function migrate(db: Database.Database, awaitDemo: boolean): void {
  const current = () => db.pragma('user_version', { simple: true }) as number
  if (current() === migrations.length) return
  db.transaction(() => {
    const version = current()
    if (version > migrations.length) throw newerStore(version)
    for (const sql of migrations.slice(version)) db.exec(sql)
    if (version === 0 && awaitDemo) db.exec(`INSERT OR REPLACE INTO settings (name, value) VALUES ('${DEMO_AWAITED.name}', '${DEMO_AWAITED.value}')`)
    db.exec(`PRAGMA user_version = ${migrations.length}`)
  }).immediate()
}

const UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|IOERR|CANTOPEN|READONLY|FULL|PROTOCOL|NOTADB|CORRUPT)/

/** Errors of the connection, not the file (opened read-only, broken under an I/O error): a new one cures them. */
const CURED_BY_REOPEN = /^SQLITE_(READONLY|CANTOPEN|IOERR)/

const codeOf = (error: unknown) => {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : ''
}

export const curedByReopen = (error: unknown) => CURED_BY_REOPEN.test(codeOf(error))

/** Another connection holds the lock this statement needs (SQLITE_BUSY and its extended codes). */
export const isLockedOut = (error: unknown) => codeOf(error).startsWith('SQLITE_BUSY')

/** The write needed space the disk (or `PRAGMA max_page_count`) did not give. */
export const isOutOfSpace = (error: unknown) => codeOf(error).startsWith('SQLITE_FULL')

/** Maps the SQLite errors that mean "the file cannot be used right now" to StoreUnavailableError. */
export function asStoreError(error: unknown): unknown {
  const code = codeOf(error)
  return UNAVAILABLE.test(code) ? new StoreUnavailableError(`SQLite store unavailable (${code})`, { cause: error }) : error
}

const PAUSE = new Int32Array(new SharedArrayBuffer(4))

/**
 * `open`, tried again while SQLite answers SQLITE_BUSY, up to `waitMs`. Some answers come without
 * waiting out busy_timeout (another process making or recovering a new file's WAL): of two
 * instances starting together one would fail. Only a start waits so.
 */
export function throughBusy<T>(open: () => T, waitMs: number): T {
  const giveUpAt = Date.now() + waitMs
  for (;;) {
    try {
      return open()
    } catch (error) {
      if (!isLockedOut(error) || Date.now() >= giveUpAt) throw error
      Atomics.wait(PAUSE, 0, 0, 50)
    }
  }
}
