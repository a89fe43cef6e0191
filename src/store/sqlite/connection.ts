import type Database from 'better-sqlite3'
import type { Sites } from '../../vocabulary.js'
import type { AdapterCollections } from '../guarded-store.js'
import { SqliteDatatrail } from './datatrail.js'
import { SqliteEvents } from './events.js'
import { SqliteFirstStart } from './first-start.js'
import { SqliteHeartbeats } from './heartbeats.js'
import { SqliteTraces } from './traces.js'
import { SqliteTransitions } from './transitions.js'
import { SqliteUsers } from './users.js'
import { SqliteViews } from './views.js'

/**
 * One connection to the file and everything prepared on it. Statements belong to their connection,
 * so a store that reopens its file makes a new SqliteConnection, never a new Database alone.
 */
export class SqliteConnection {
  readonly collections: AdapterCollections
  /**
   * Writes one page under the write lock and rolls it back: throws what a write would meet now
   * (another process's lock, a read-only connection, a database that may not grow) and touches
   * nothing on disk, so a load balancer may call it as often as it likes.
   */
  readonly tryWrite: () => void
  /**
   * Commits one page and deletes it again. Only a commit meets a full disk (the WAL grows then),
   * so this is how a store that met one learns that there is room again.
   */
  readonly commitWrite: () => void

  constructor(
    readonly db: Database.Database,
    sites: Sites
  ) {
    const tables = {
      events: new SqliteEvents(db, sites),
      traces: new SqliteTraces(db, sites),
      datatrail: new SqliteDatatrail(db),
      heartbeats: new SqliteHeartbeats(db)
    }
    this.collections = {
      users: new SqliteUsers(db),
      ...tables,
      views: new SqliteViews(db, tables, sites),
      transitions: new SqliteTransitions(db),
      firstStart: new SqliteFirstStart(db, tables)
    }

    const pageSize = db.pragma('page_size', { simple: true }) as number
    const addPage = db.prepare('INSERT INTO write_probe (page) VALUES (zeroblob(?))')
    const removePages = db.prepare('DELETE FROM write_probe')
    const begin = db.prepare('BEGIN IMMEDIATE')
    const rollback = db.prepare('ROLLBACK')
    this.tryWrite = () => {
      begin.run()
      try {
        addPage.run(pageSize)
      } finally {
        // SQLite may have rolled back by itself already (it does after some I/O errors).
        if (db.inTransaction) rollback.run()
      }
    }
    const commit = db.transaction(() => {
      addPage.run(pageSize)
      removePages.run()
    })
    this.commitWrite = () => commit.immediate()
  }

  close(): void {
    if (this.db.open) this.db.close()
  }
}
