import type Database from 'better-sqlite3'
import {
  adoptedLine,
  conflictOf,
  configurationJson,
  readConfiguration,
  sameConfiguration,
  type ConfigurationUse,
  type Instance,
  type LeaseRecord,
  type StoreConfiguration
} from '../configuration.js'
import { leasesBeside, takenOver } from '../leases.js'

/** What a start that adopts holds: its lease, and the clock leases are renewed and judged by (ms). */
export interface LeaseTaking {
  instance: Instance
  now: () => number
}

/**
 * The configuration the store records: settings 'configuration', or on a store whose kept audit an
 * earlier release made, what its signatures say (their sites, and their deadlines). Null when
 * neither: a store nothing has made an audit in.
 */
export function recordedConfiguration(db: Database.Database): StoreConfiguration | null {
  const read = db.prepare<[string], string>('SELECT value FROM settings WHERE name = ?').pluck()
  const recorded = read.get('configuration')
  if (recorded !== undefined) return readConfiguration(recorded)
  const facts = parsed(read.get('kept_audit_facts')) as { sites?: unknown } | null
  const looks = parsed(read.get('kept_audit_looks')) as { deadlines?: unknown } | null
  if (facts === null || looks === null) return null
  return readConfiguration({ sites: facts.sites, deadlines: looks.deadlines ?? looks })
}

const parsed = (text: string | undefined): unknown => {
  try {
    return text === undefined ? null : JSON.parse(text)
  } catch {
    return null
  }
}

/** The leases of the instances other than `except`, most recently renewed first. */
function otherLeases(db: Database.Database, except: string | undefined): LeaseRecord[] {
  const rows = db
    .prepare<[], { id: string; host: string; pid: number; configuration: string; renewed_at: number }>(
      'SELECT id, host, pid, configuration, renewed_at FROM instances ORDER BY renewed_at DESC'
    )
    .all()
  return rows
    .filter((row) => row.id !== except)
    .map((row) => ({ instance: { id: row.id, host: row.host, pid: row.pid }, configuration: readConfiguration(row.configuration), renewedAt: row.renewed_at }))
}

/**
 * Settles what the store's configuration is before anything is made from it, as `use` says
 * (configuration.ts). Throws ConfigurationConflictError to refuse. Resolves to whether the kept
 * state is to be brought up to date (rebuildOutputTexts, the kept audit's rebuild) and, when this start
 * changed the configuration, the line that says so. The check and the lease are one IMMEDIATE
 * transaction: of two instances starting together, the second sees the first's lease.
 */
export function resolveConfiguration(
  db: Database.Database,
  wanted: StoreConfiguration,
  use: ConfigurationUse,
  lease: LeaseTaking | undefined,
  now: () => number = Date.now
): { refresh: boolean; changed?: string } {
  if (use === 'ignore') return { refresh: false }
  if (use === 'take-over') return takeOver(db, now())
  if (use === 'read') {
    const recorded = recordedConfiguration(db)
    const conflict = recorded === null ? undefined : conflictOf(wanted, recorded, 'store', 'sites')
    if (conflict !== undefined) throw conflict
    return { refresh: false }
  }
  const record = db.prepare<[string]>(
    `INSERT INTO settings (name, value) VALUES ('configuration', ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value`
  )
  try {
    return adoptOrWrite(db, wanted, use, lease, record)
  } catch (error) {
    if (use !== 'adopt' || !isReadOnly(error)) throw error
    // The file cannot be written now (opened read-only; the service serves 503 until it can): the
    // same checks, with nothing written. The lease is taken by its first renewal that can write.
    refuseBeside(db, wanted, lease?.now() ?? Date.now(), lease)
    const recorded = recordedConfiguration(db)
    const conflict = recorded === null ? undefined : conflictOf(wanted, recorded, 'store')
    if (conflict !== undefined) throw conflict
    return { refresh: false }
  }
}

/** Throws the conflict with the first other instance whose configuration differs; returns the lapsed leases of this one. */
const refuseBeside = (db: Database.Database, wanted: StoreConfiguration, now: number, lease: LeaseTaking | undefined) =>
  leasesBeside(wanted, otherLeases(db, lease?.instance.id), now)

/** Removes the lapsed leases, never a live one's: the operator's `tracer take-over`. */
function takeOver(db: Database.Database, now: number): { refresh: false; changed: string } {
  return db
    .transaction(() => {
      const { removed, line } = takenOver(otherLeases(db, undefined), now)
      const remove = db.prepare<[string]>('DELETE FROM instances WHERE id = ?')
      for (const lease of removed) remove.run(lease.instance.id)
      return { refresh: false as const, changed: line }
    })
    .immediate()
}

const isReadOnly = (error: unknown) => typeof (error as { code?: unknown }).code === 'string' && (error as { code: string }).code.startsWith('SQLITE_READONLY')

function adoptOrWrite(
  db: Database.Database,
  wanted: StoreConfiguration,
  use: ConfigurationUse,
  lease: LeaseTaking | undefined,
  record: Database.Statement<[string]>
): { refresh: boolean; changed?: string } {
  return db
    .transaction(() => {
      const recorded = recordedConfiguration(db)
      if (use === 'write') {
        const conflict = recorded === null ? undefined : conflictOf(wanted, recorded, 'store')
        if (conflict !== undefined) throw conflict
      } else {
        const now = lease?.now() ?? Date.now()
        // Only when there is one: a start that changes nothing writes nothing (a file opened read-only still opens).
        const remove = db.prepare<[string]>('DELETE FROM instances WHERE id = ?')
        for (const lapsed of refuseBeside(db, wanted, now, lease)) remove.run(lapsed.instance.id)
        if (lease !== undefined) {
          const { id, host, pid } = lease.instance
          db.prepare<[string, string, number, string, number]>(
            `INSERT INTO instances (id, host, pid, configuration, renewed_at) VALUES (?, ?, ?, ?, ?)
             ON CONFLICT (id) DO UPDATE SET configuration = excluded.configuration, renewed_at = excluded.renewed_at`
          ).run(id, host, pid, configurationJson(wanted), now)
        }
      }
      const stored = db.prepare<[], string>(`SELECT value FROM settings WHERE name = 'configuration'`).pluck().get()
      if (stored !== configurationJson(wanted)) record.run(configurationJson(wanted))
      const changed = recorded !== null && !sameConfiguration(wanted, recorded) ? adoptedLine(recorded, wanted) : undefined
      return changed === undefined ? { refresh: true } : { refresh: true, changed }
    })
    .immediate()
}
