import type Database from 'better-sqlite3'
import type { BulkLoad } from '../../domain/records.js'
import type { Adapter } from '../guarded-store.js'
import type { DemoSeeding, FirstStart } from '../port.js'
import type { SqliteDatatrail, SqliteHeartbeats } from './collections.js'
import type { SqliteEvents } from './events.js'
import type { SqliteTraces } from './traces.js'

/** The `settings` row a server's start writes into a store it creates, in the transaction that creates it. */
const DEMO_AWAITED = { name: 'demo_data', value: 'awaited' } as const

/** Marks a store a server's start is creating as awaiting its demo data (see openDatabase). */
export function markDemoAwaited(db: Database.Database): void {
  db.exec(`INSERT OR REPLACE INTO settings (name, value) VALUES ('${DEMO_AWAITED.name}', '${DEMO_AWAITED.value}')`)
}

/** Demo data goes in only in the IMMEDIATE transaction that ends the wait: whole or not at all, and by one of several processes starting at once. */
export class SqliteFirstStart implements Adapter<FirstStart> {
  private readonly statements

  constructor(
    private readonly db: Database.Database,
    private readonly tables: { events: SqliteEvents; traces: SqliteTraces; datatrail: SqliteDatatrail; heartbeats: SqliteHeartbeats }
  ) {
    this.statements = {
      awaited: db.prepare<[string, string], { found: 1 }>('SELECT 1 AS found FROM settings WHERE name = ? AND value = ?'),
      endWait: db.prepare<[string]>('DELETE FROM settings WHERE name = ?'),
      holdsData: db
        .prepare<[], number>(
          `SELECT EXISTS (SELECT 1 FROM events) OR EXISTS (SELECT 1 FROM traces) OR EXISTS (SELECT 1 FROM datatrail)
                  OR EXISTS (SELECT 1 FROM heartbeats) OR EXISTS (SELECT 1 FROM transitions)`
        )
        .pluck()
    }
  }

  awaitsDemo(): boolean {
    return this.statements.awaited.get(DEMO_AWAITED.name, DEMO_AWAITED.value) !== undefined
  }

  seedDemo(load: () => BulkLoad, now: number): DemoSeeding {
    const seed = this.db.transaction((): DemoSeeding => {
      if (!this.awaitsDemo()) return 'not-awaited'
      this.statements.endWait.run(DEMO_AWAITED.name)
      if (this.statements.holdsData.get() === 1) return 'holds-data'
      const { events, traces, datatrail, heartbeats, transitions } = load()
      this.tables.events.upsert(events)
      this.tables.traces.upsert(traces)
      this.tables.datatrail.put(datatrail)
      this.tables.heartbeats.add(heartbeats, now)
      this.tables.traces.record(transitions)
      return 'seeded'
    })
    return seed.immediate()
  }
}
