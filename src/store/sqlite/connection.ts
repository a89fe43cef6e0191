import type Database from 'better-sqlite3'
import type { Sites } from '../../vocabulary.js'
import type { AdapterCollections } from '../guarded-store.js'
import type { StageDeadlines } from '../../domain/stage-deadlines.js'
import { Keeper, type KeeperConfig } from '../../kept-audit/keeper.js'
import { SqliteKeptInWrites } from './kept-in-writes.js'
import { SqliteKeptRows, SqliteRecordCounts } from './kept-rows.js'
import { SqliteKeptTexts } from './kept-texts.js'
import { RecordWrites } from './record-writes.js'
import { SqliteDatatrail, SqliteHeartbeats, sqliteFirstStart, sqliteTransitions, sqliteUsers, sqliteVerdictFeed } from './collections.js'
import { EventRecordsReader } from './event-records.js'
import { SqliteEvents } from './events.js'
import { SqliteTraces } from './traces.js'
import { SqliteViews } from './views.js'
import { registerAsksBaseband, type OutputTextsState } from './output-texts.js'

/** What the kept audit looks with: the stage deadlines and their clock (ms); whether a rebuild is under way; how far the texts are made. */
export interface KeptAuditSettings {
  deadlines: StageDeadlines
  now: () => number
  rebuilding: () => boolean
  texts: OutputTextsState
}

/** One connection and everything prepared on it: statements belong to their connection, so a reopen makes a new SqliteConnection. */
export class SqliteConnection {
  readonly collections: AdapterCollections
  readonly keptRows: SqliteKeptRows
  readonly keeperConfig: KeeperConfig
  /** Writes a page under the write lock and rolls it back: throws what a write would meet now, touching nothing on disk. */
  readonly tryWrite: () => void
  /** Takes the write lock and gives it back: throws SQLITE_BUSY while another connection holds it. */
  readonly probeLock: () => void
  /** Commits a page and deletes it: only a commit meets a full disk, so this learns that there is room again. */
  readonly commitWrite: () => void

  constructor(
    readonly db: Database.Database,
    sites: Sites,
    audit: KeptAuditSettings
  ) {
    // Reads of rows a rewrite of the texts has not reached make the baseband flag from the actions with it.
    registerAsksBaseband(db, sites)
    const reader = new EventRecordsReader(db, sites)
    const rows = (this.keptRows = new SqliteKeptRows(db, reader, new SqliteRecordCounts(db), new SqliteKeptTexts(db, sites)))
    const config = (this.keeperConfig = { sites, deadlines: audit.deadlines, clock: audit.now })
    // Every record table is written through these, so that each write keeps its event's audit.
    const records = new RecordWrites(db, new SqliteKeptInWrites(db, rows, reader, config, audit.rebuilding))
    const tables = {
      events: new SqliteEvents(db, sites, records, audit.texts),
      traces: new SqliteTraces(db, sites, records),
      datatrail: new SqliteDatatrail(db, sites, records),
      heartbeats: new SqliteHeartbeats(db, sites, records)
    }
    this.collections = {
      users: sqliteUsers(db),
      ...tables,
      views: new SqliteViews(db, tables, sites, audit.texts),
      transitions: sqliteTransitions(db),
      audits: new Keeper(rows, config),
      verdictChanges: sqliteVerdictFeed(db),
      firstStart: sqliteFirstStart(db, tables)
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
    this.probeLock = () => {
      begin.run()
      rollback.run()
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
