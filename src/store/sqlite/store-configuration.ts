import type Database from 'better-sqlite3'
import { atOnce, type Maybe } from '../../maybe.js'
import {
  asRecorded,
  readConfiguration,
  type ConfigurationConflictError,
  type ConfigurationStorage,
  type Instance,
  type LeaseRecord,
  type StoreConfiguration,
  type StoredConfiguration
} from '../configuration.js'
import { InstanceLease } from '../configuration-use.js'

/** The configuration (settings row `configuration`, or an earlier release's audit signatures) and the leases (`instances`) on one connection. */
export class SqliteConfiguration implements ConfigurationStorage {
  /** Each statement prepared at its first use, once: a connection keeps them all for life (native-lifetimes.ts), and a lease renews for as long as it serves. */
  private readonly prepared = new Map<string, Database.Statement>()

  constructor(private readonly db: Database.Database) {}

  private statement<Parameters extends unknown[], Row = unknown>(sql: string): Database.Statement<Parameters, Row> {
    if (!this.prepared.has(sql)) this.prepared.set(sql, this.db.prepare(sql))
    return this.prepared.get(sql) as unknown as Database.Statement<Parameters, Row>
  }

  stored(): StoredConfiguration {
    const read = this.statement<[string], string>('SELECT value FROM settings WHERE name = ?').pluck()
    return { configuration: read.get('configuration'), facts: read.get('kept_audit_facts'), looks: read.get('kept_audit_looks') }
  }

  record(configuration: StoreConfiguration): void {
    const record = this.statement<[string]>(`INSERT INTO settings (name, value) VALUES ('configuration', ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value`)
    record.run(JSON.stringify(asRecorded(configuration)))
  }

  leases(): LeaseRecord[] {
    const rows = this.statement<[], { id: string; host: string; pid: number; configuration: string; renewed_at: number }>(
      'SELECT id, host, pid, configuration, renewed_at FROM instances'
    ).all()
    return rows.map((row) => ({ instance: { id: row.id, host: row.host, pid: row.pid }, configuration: readConfiguration(row.configuration), renewedAt: row.renewed_at }))
  }

  putLease({ id, host, pid }: Instance, configuration: StoreConfiguration, renewedAt: number): void {
    const put = this.statement<[string, string, number, string, number]>(
      `INSERT INTO instances (id, host, pid, configuration, renewed_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET configuration = excluded.configuration, renewed_at = excluded.renewed_at`
    )
    put.run(id, host, pid, JSON.stringify(asRecorded(configuration)), renewedAt)
  }

  removeLease(id: string, renewedAt?: number): void {
    if (renewedAt === undefined) this.statement<[string]>('DELETE FROM instances WHERE id = ?').run(id)
    else this.statement<[string, number]>('DELETE FROM instances WHERE id = ? AND renewed_at = ?').run(id, renewedAt)
  }

  /** One IMMEDIATE transaction: of two instances starting together, the second sees the first's lease. */
  atomically<T>(work: () => Maybe<T>): T {
    return this.db.transaction(() => atOnce(work())).immediate()
  }

  cannotWrite(error: unknown): boolean {
    return String((error as { code?: unknown }).code).startsWith('SQLITE_READONLY')
  }
}

/** A serving instance's lease (configuration-use.ts), renewed on a connection of its own that no reopen interrupts. */
export const sqliteLease = (db: Database.Database, lease: { instance: Instance; now: () => number }, configuration: StoreConfiguration, lost: (error: ConfigurationConflictError) => void) =>
  new InstanceLease(new SqliteConfiguration(db), lease.instance, configuration, lease.now, lost, () => db.close())
