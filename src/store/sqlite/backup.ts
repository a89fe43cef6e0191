import type Database from 'better-sqlite3'
import { openKeptDatabase } from './native-lifetimes.js'

const RECORD_TABLES = ['events', 'traces', 'datatrail', 'heartbeats'] as const

/** The records of a store, counted: what a backup holds. */
type RecordCounts = Record<(typeof RECORD_TABLES)[number], number>

/** Pages copied in one step of a backup: 256 pages of 4 KiB, 1 MiB, a few milliseconds of writing. */
const PAGES_PER_STEP = 256

/** A file that is no tracer store, or a copy that is not the store it was made from (left for the caller to remove). */
export class BackupCheckError extends Error {
  override name = 'BackupCheckError'
}

/** A read transaction on a read-only connection (holding up no writer): without it SQLite's backup restarts at every commit between steps and never ends. */
export class StoreSnapshot {
  readonly pages: number
  readonly pageSize: number
  /** The records at this moment: the copy must hold as many. */
  readonly counts: RecordCounts

  private constructor(private readonly db: Database.Database) {
    db.exec('BEGIN')
    // The first read starts the transaction, and the moment the copy will show.
    this.counts = countRecords(db)
    this.pages = db.pragma('page_count', { simple: true }) as number
    this.pageSize = db.pragma('page_size', { simple: true }) as number
  }

  /** Opens `path` read-only (it writes nothing, not even the store's configuration) and takes the snapshot. */
  static take(path: string, busyTimeoutMs: number): StoreSnapshot {
    const db = openKeptDatabase(path, { readonly: true, fileMustExist: true })
    try {
      // A new read transaction may meet a writer's checkpoint for a moment: waited for, not failed.
      db.pragma(`busy_timeout = ${busyTimeoutMs}`)
      return new StoreSnapshot(db)
    } catch (error) {
      db.close()
      throw error
    }
  }

  /** Writes the snapshot to a new file, `pagesPerStep` pages a turn of the event loop; `onStep` is told how many are copied. */
  async copyTo(destination: string, { pagesPerStep = PAGES_PER_STEP, onStep = () => {} }: { pagesPerStep?: number; onStep?: (copied: number) => void } = {}): Promise<void> {
    await this.db.backup(destination, {
      progress: ({ totalPages, remainingPages }) => {
        onStep(totalPages - remainingPages)
        return pagesPerStep
      }
    })
    onStep(this.pages)
  }

  /** Ends the read transaction: the WAL may be checkpointed past this moment again. */
  close(): void {
    if (!this.db.open) return
    if (this.db.inTransaction) this.db.exec('COMMIT')
    this.db.close()
  }
}

/** Whether another connection holds a write lock on `path`, as a backup in progress does on its destination. */
export function isBeingWritten(path: string): boolean {
  const db = openKeptDatabase(path, { fileMustExist: true })
  try {
    db.pragma('busy_timeout = 0')
    db.exec('BEGIN IMMEDIATE')
    db.exec('ROLLBACK')
    return false
  } catch (error) {
    const code = (error as { code?: unknown }).code
    return code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED'
  } finally {
    db.close()
  }
}

/** Checks the copy against its snapshot, and leaves it one file (a rollback journal: no -wal beside it). */
export function checkCopy(path: string, snapshot: StoreSnapshot): RecordCounts {
  const db = openKeptDatabase(path, { fileMustExist: true })
  try {
    db.pragma('journal_mode = DELETE')
    const problems = db.prepare<[], string>('PRAGMA integrity_check(5)').pluck().all()
    if (problems.length !== 1 || problems[0] !== 'ok') throw new BackupCheckError(`the copy fails SQLite's integrity check: ${problems.join('; ')}`)
    const counts = countRecords(db)
    for (const table of RECORD_TABLES) {
      if (counts[table] !== snapshot.counts[table]) {
        throw new BackupCheckError(`the copy holds ${counts[table]} ${table} records, the store held ${snapshot.counts[table]}`)
      }
    }
    return counts
  } finally {
    db.close()
  }
}

function countRecords(db: Database.Database): RecordCounts {
  const tables = new Set(db.prepare<[], string>(`SELECT name FROM sqlite_master WHERE type = 'table'`).pluck().all())
  const missing = RECORD_TABLES.filter((table) => !tables.has(table))
  if (missing.length > 0) throw new BackupCheckError(`the file is not a tracer store: it has no ${missing.join(', ')} table`)
  return Object.fromEntries(RECORD_TABLES.map((table) => [table, db.prepare<[], number>(`SELECT COUNT(*) FROM ${table}`).pluck().get()!])) as RecordCounts
}
