import type Database from 'better-sqlite3'
import type { VerdictChange } from '../../../schemas/audit.js'
import type { Role } from '../../../schemas/auth.js'
import type { HeartbeatInput } from '../../../schemas/heartbeats.js'
import { applyHeartbeat, applyMember } from '../../domain/audit/kept-facts.js'
import type { BulkLoad, DatatrailRecord, FeedTransition, HeartbeatRecord, NewUserRecord, UserRecord } from '../../domain/records.js'
import type { Sites } from '../../vocabulary.js'
import type { Adapter } from '../guarded-store.js'
import type { DatatrailCollection, DemoSeeding, FirstStart, HeartbeatCollection, HeartbeatPage, TransitionFeed, UserCollection, VerdictFeed } from '../port.js'
import { DEMO_AWAITED } from './database.js'
import type { SqliteEvents } from './events.js'
import type { RecordWrites } from './record-writes.js'
import { TRANSITION_COLUMNS, type SqliteTraces } from './traces.js'

interface DatatrailRow {
  event_no: number
  member: string
  doc: string
  update_timestamp: number
}

/** Datatrail members, one row per (event, member), the member's fields as JSON. */
export class SqliteDatatrail implements Adapter<DatatrailCollection> {
  private readonly statements
  readonly put: (members: readonly DatatrailRecord[]) => void

  constructor(db: Database.Database, sites: Sites, records: RecordWrites) {
    this.put = records.transaction((members: readonly DatatrailRecord[]) => {
      for (const { event_no, member, value, update_timestamp } of members) {
        this.statements.put({ event_no, member, doc: JSON.stringify(value), update_timestamp }, value)
      }
    })
    this.statements = {
      put: records.statement<DatatrailRow, DatatrailRecord['value']>(
        `INSERT INTO datatrail (event_no, member, doc, update_timestamp) VALUES (@event_no, @member, @doc, @update_timestamp)
         ON CONFLICT (event_no, member) DO UPDATE SET doc = excluded.doc, update_timestamp = excluded.update_timestamp`,
        ({ event_no, member }, _result, value) => [event_no, (facts) => applyMember(facts, member, value, sites)]
      ),
      of: db.prepare<[number], DatatrailRow>('SELECT * FROM datatrail WHERE event_no = ? ORDER BY member')
    }
  }

  /** The members of one event (for the views). */
  of(eventNo: number): DatatrailRecord[] {
    return this.statements.of
      .all(eventNo)
      .map((row) => ({ event_no: row.event_no, member: row.member, value: JSON.parse(row.doc) as DatatrailRecord['value'], update_timestamp: row.update_timestamp }))
  }
}

/** Heartbeats, one row per heartbeat_id, the record as JSON. */
export class SqliteHeartbeats implements Adapter<HeartbeatCollection> {
  private readonly statements
  readonly add: (heartbeats: readonly HeartbeatInput[], now: number) => number

  constructor(
    private readonly db: Database.Database,
    sites: Sites,
    records: RecordWrites
  ) {
    this.add = records.transaction((heartbeats: readonly HeartbeatInput[], now: number) => {
      let added = 0
      for (const heartbeat of heartbeats) added += this.statements.add([heartbeat.heartbeat_id, heartbeat.event_no, JSON.stringify(heartbeat), now], heartbeat).changes
      return added
    })
    this.statements = {
      // A heartbeat_id stored already is left as it is, so only the new ones reach the audit.
      add: records.statement<[number, number, string, number], HeartbeatInput>(
        `INSERT INTO heartbeats (heartbeat_id, event_no, doc, update_timestamp) VALUES (?, ?, ?, ?)
         ON CONFLICT (heartbeat_id) DO NOTHING`,
        (_row, { changes }, heartbeat) => (changes === 1 ? [heartbeat.event_no, (facts) => applyHeartbeat(facts, heartbeat, sites)] : null)
      ),
      page: db.prepare<[number, number, number], { doc: string; update_timestamp: number }>(
        'SELECT doc, update_timestamp FROM heartbeats WHERE event_no = ? AND heartbeat_id > ? ORDER BY heartbeat_id LIMIT ?'
      ),
      // Kept by triggers (migrations.ts), so that no read counts the rows.
      count: db.prepare<[number], number>('SELECT heartbeat_count FROM record_counts WHERE event_no = ?').pluck(),
      // The last entry of the event's range of heartbeats_by_event_update: one seek.
      latestUpdate: db.prepare<[number], number>('SELECT update_timestamp FROM heartbeats WHERE event_no = ? ORDER BY update_timestamp DESC LIMIT 1').pluck()
    }
  }

  /** One snapshot: the part, the count and the latest time agree even while heartbeats arrive. */
  page(eventNo: number, afterId: number | null, limit: number): HeartbeatPage {
    return this.db.transaction(() => this.readPage(eventNo, afterId, limit))()
  }

  /** `page` without a transaction of its own, for the views, which call it inside theirs. */
  readPage(eventNo: number, afterId: number | null, limit: number): HeartbeatPage {
    // heartbeat_id is at least 0, so -1 is before every one.
    const rows = this.statements.page.all(eventNo, afterId ?? -1, limit)
    return {
      heartbeats: rows.map((row): HeartbeatRecord => ({ heartbeat: JSON.parse(row.doc) as HeartbeatInput, update_timestamp: row.update_timestamp })),
      total: this.statements.count.get(eventNo) ?? 0,
      latestUpdate: this.statements.latestUpdate.get(eventNo) ?? 0
    }
  }
}

/** Users and their refresh tokens; a row is the record. */
export function sqliteUsers(db: Database.Database): Adapter<UserCollection> {
  const insert = db.prepare<NewUserRecord>(
    `INSERT INTO users (name, password_hash, role, created_at)
     VALUES (@name, @password_hash, @role, @created_at) ON CONFLICT (name) DO NOTHING`
  )
  const find = db.prepare<[string], UserRecord>('SELECT * FROM users WHERE name = ?')
  const list = db.prepare<[], UserRecord>('SELECT * FROM users ORDER BY name')
  const count = db.prepare<[], { n: number }>('SELECT count(*) AS n FROM users')
  const setRole = db.prepare<[Role, string]>('UPDATE users SET role = ? WHERE name = ?')
  const setPasswordHash = db.prepare<[string, string]>(
    `UPDATE users SET password_hash = ?, refresh_token_hash = NULL, refresh_token_expires_at = NULL
     WHERE name = ?`
  )
  const remove = db.prepare<[string]>('DELETE FROM users WHERE name = ?')
  const saveRefreshToken = db.prepare<[string, number, string]>('UPDATE users SET refresh_token_hash = ?, refresh_token_expires_at = ? WHERE name = ?')
  return {
    create: ({ name, password_hash, role, created_at }) => insert.run({ name, password_hash, role, created_at }).changes === 1,
    find: (name) => find.get(name) ?? null,
    list: () => list.all(),
    count: () => count.get()?.n ?? 0,
    setRole: (name, role) => setRole.run(role, name).changes === 1,
    setPasswordHash: (name, passwordHash) => setPasswordHash.run(passwordHash, name).changes === 1,
    remove: (name) => remove.run(name).changes === 1,
    saveRefreshToken: (name, tokenHash, expiresAt) => saveRefreshToken.run(tokenHash, expiresAt, name).changes === 1
  }
}

/** Read by seq from the last position seen, one range scan: writers commit one at a time, so no seq appears after a higher one was read. */
function bySeq<Row>(db: Database.Database, table: string, columns: string) {
  const position = db.prepare<[], number>(`SELECT coalesce(max(seq), 0) FROM ${table}`).pluck()
  const since = db.prepare<[number, number], Row & { seq: number }>(`SELECT seq, ${columns} FROM ${table} WHERE seq > ? ORDER BY seq LIMIT ?`)
  return {
    position: () => position.get() ?? 0,
    since: (after: number, limit: number) => {
      const rows = since.all(after, limit)
      return { rows, position: rows.at(-1)?.seq ?? after }
    }
  }
}

export function sqliteTransitions(db: Database.Database): Adapter<TransitionFeed> {
  const feed = bySeq<FeedTransition>(db, 'transitions', `event_no, ${TRANSITION_COLUMNS}`)
  return {
    position: feed.position,
    since: (after, limit) => {
      const { rows, position } = feed.since(after, limit)
      return { transitions: rows.map(({ seq: _seq, ...transition }) => transition), position }
    }
  }
}

export function sqliteVerdictFeed(db: Database.Database): Adapter<VerdictFeed> {
  const feed = bySeq<{ event_no: number; message: string }>(db, 'audit_changes', 'event_no, message')
  return {
    position: feed.position,
    since: (after, limit) => {
      const { rows, position } = feed.since(after, limit)
      return { items: rows.map(changeOf), position }
    }
  }
}

/**
 * A row's change. A message that is not JSON (a hand edit) becomes a bare `{event_no}`, which the
 * live streams skip and count as unwritable: a throw would stop the feed, and every stream, there.
 */
function changeOf(row: { event_no: number; message: string }): VerdictChange {
  try {
    return JSON.parse(row.message) as VerdictChange
  } catch {
    return { event_no: row.event_no } as VerdictChange
  }
}

/**
 * The demo data set goes in only in the IMMEDIATE transaction that ends a new store's wait for it:
 * whole or not at all, and by one of several processes starting at once (the others find it ended).
 */
export function sqliteFirstStart(
  db: Database.Database,
  tables: { events: SqliteEvents; traces: SqliteTraces; datatrail: SqliteDatatrail; heartbeats: SqliteHeartbeats }
): Adapter<FirstStart> {
  const awaited = db.prepare<[string, string], { found: 1 }>('SELECT 1 AS found FROM settings WHERE name = ? AND value = ?')
  const endWait = db.prepare<[string]>('DELETE FROM settings WHERE name = ?')
  const holdsData = db
    .prepare<[], number>(
      `SELECT EXISTS (SELECT 1 FROM events) OR EXISTS (SELECT 1 FROM traces) OR EXISTS (SELECT 1 FROM datatrail)
              OR EXISTS (SELECT 1 FROM heartbeats) OR EXISTS (SELECT 1 FROM transitions)`
    )
    .pluck()
  const awaitsDemo = () => awaited.get(DEMO_AWAITED.name, DEMO_AWAITED.value) !== undefined
  const seed = db.transaction((load: () => BulkLoad, now: number): DemoSeeding => {
    if (!awaitsDemo()) return 'not-awaited'
    endWait.run(DEMO_AWAITED.name)
    if (holdsData.get() === 1) return 'holds-data'
    const { events, traces, datatrail, heartbeats, transitions } = load()
    tables.events.upsert(events)
    tables.traces.upsert(traces)
    tables.datatrail.put(datatrail)
    tables.heartbeats.add(heartbeats, now)
    tables.traces.record(transitions)
    return 'seeded'
  })
  return { awaitsDemo, seedDemo: (load, now) => seed.immediate(load, now) }
}
