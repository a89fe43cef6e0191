import type Database from 'better-sqlite3'
import { conflictOf, configurationJson, LEASE_RENEW_MS, type ConfigurationConflictError, type StoreConfiguration } from '../configuration.js'
import type { LeaseTaking } from './store-configuration.js'
import { recordedConfiguration } from './store-configuration.js'

/**
 * Keeps a serving instance's lease (taken by resolveConfiguration at start) alive on a connection of
 * its own, so that the store's reopening never interrupts it, and removes it on a clean stop. Each
 * renewal also reads the store's configuration: an instance that finds another recorded (another
 * start took the store over: an operator's `tracer take-over` while this one could not be seen to
 * run) is told by `lost` and must stop serving, since its reads would no longer match what the
 * store keeps. A renewal that another program's lock holds up is no such loss: a lease whose
 * holder runs stays live (leases.ts).
 */
export class SqliteLease {
  private readonly timer: NodeJS.Timeout
  private stopped = false

  constructor(
    private readonly db: Database.Database,
    private readonly lease: LeaseTaking,
    private readonly configuration: StoreConfiguration,
    private readonly lost: (error: ConfigurationConflictError) => void
  ) {
    this.timer = setInterval(() => this.renew(), LEASE_RENEW_MS).unref()
  }

  /** One renewal; a lock or an I/O error only delays it to the next (the lease lasts several). */
  renew(): void {
    if (this.stopped) return
    try {
      const recorded = recordedConfiguration(this.db)
      const conflict = recorded === null ? undefined : conflictOf(this.configuration, recorded, 'taken-over')
      if (conflict !== undefined) {
        this.stop()
        return this.lost(conflict)
      }
      const { id, host, pid } = this.lease.instance
      this.db
        .prepare<[string, string, number, string, number]>(
          `INSERT INTO instances (id, host, pid, configuration, renewed_at) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (id) DO UPDATE SET renewed_at = excluded.renewed_at`
        )
        .run(id, host, pid, configurationJson(this.configuration), this.lease.now())
    } catch {
      // Renewed at the next interval.
    }
  }

  /** Removes the lease: the instance stops, and another configuration may start at once. */
  stop(): void {
    if (this.stopped) return
    this.stopped = true
    clearInterval(this.timer)
    try {
      this.db.prepare<[string]>('DELETE FROM instances WHERE id = ?').run(this.lease.instance.id)
    } catch {
      // Left to expire.
    }
    this.db.close()
  }
}
