import type { Collection, Db } from 'mongodb'
import {
  conflictOf,
  LEASE_RENEW_MS,
  readConfiguration,
  type ConfigurationConflictError,
  type Instance,
  type LeaseRecord,
  type StoreConfiguration
} from '../configuration.js'
import { leasesBeside, takenOver } from '../leases.js'
import { numberIn } from './documents.js'

/**
 * The leases of the serving instances (store/configuration.ts): one document per instance in a
 * collection of their own, `{_id: instance id, host, pid, configuration, renewed_at}`. `renewed_at`
 * is the instance's own clock: the hosts of one store are expected to agree within seconds.
 */
export const INSTANCES_COLLECTION = 'instances'

interface LeaseDocument {
  _id: string
  host: string
  pid: number
  configuration: StoreConfiguration
  renewed_at: number
}

const leasesOf = (db: Db): Collection<LeaseDocument> => db.collection<LeaseDocument>(INSTANCES_COLLECTION)

const put = (db: Db, instance: Instance, configuration: StoreConfiguration, now: number) =>
  leasesOf(db).updateOne(
    { _id: instance.id },
    { $set: { host: instance.host, pid: instance.pid, configuration: { sites: [...configuration.sites], deadlines: { ...configuration.deadlines } }, renewed_at: now } },
    { upsert: true }
  )

const recordOf = (lease: LeaseDocument): LeaseRecord => ({
  instance: { id: lease._id, host: String(lease.host), pid: numberIn(lease.pid, 0) },
  configuration: readConfiguration(lease.configuration),
  renewedAt: numberIn(lease.renewed_at, 0)
})

/**
 * Takes this instance's lease, then refuses (removing it again) when another instance, live or
 * whose lease lapsed, has another configuration (leases.ts). The lease is written before the
 * others are read, so of two instances starting together with different settings, at least one
 * sees the other: both may refuse, never both start. Lapsed leases are removed on the way.
 */
export async function takeLease(db: Db, instance: Instance, wanted: StoreConfiguration, now: number): Promise<void> {
  await put(db, instance, wanted, now)
  const others = (await leasesOf(db).find({}).toArray()).filter((lease) => lease._id !== instance.id).map(recordOf)
  let lapsed: LeaseRecord[]
  try {
    lapsed = leasesBeside(wanted, others, now)
  } catch (conflict) {
    await leasesOf(db).deleteOne({ _id: instance.id })
    throw conflict
  }
  for (const lease of lapsed) await leasesOf(db).deleteOne({ _id: lease.instance.id, renewed_at: lease.renewedAt })
}

/** Removes the lapsed leases, never a live one's (`tracer take-over`); resolves to the line that says so. */
export async function takeOverLeases(db: Db, now: number): Promise<string> {
  const { removed, line } = takenOver((await leasesOf(db).find({}).toArray()).map(recordOf), now)
  // Only if not renewed since it was read: a holder that renewed meanwhile keeps its lease.
  for (const lease of removed) await leasesOf(db).deleteOne({ _id: lease.instance.id, renewed_at: lease.renewedAt })
  return line
}

/**
 * Renews a lease every LEASE_RENEW_MS until stopped; each renewal also holds the store's recorded
 * configuration (`recorded`) against the instance's, and tells `lost` when another start took the
 * store over (an operator's `tracer take-over` while this instance could not be seen to run): it
 * must stop serving.
 */
export class MongoLease {
  private readonly timer: NodeJS.Timeout
  private stopped = false

  constructor(
    private readonly db: Db,
    private readonly instance: Instance,
    private readonly configuration: StoreConfiguration,
    private readonly clock: () => number,
    private readonly recorded: () => Promise<StoreConfiguration | null>,
    private readonly lost: (error: ConfigurationConflictError) => void
  ) {
    this.timer = setInterval(() => void this.renew(), LEASE_RENEW_MS).unref()
  }

  async renew(): Promise<void> {
    if (this.stopped) return
    try {
      const recorded = await this.recorded()
      const conflict = recorded === null ? undefined : conflictOf(this.configuration, recorded, 'taken-over')
      if (conflict !== undefined) {
        await this.stop()
        return this.lost(conflict)
      }
      if (!this.stopped) await put(this.db, this.instance, this.configuration, this.clock())
    } catch {
      // Renewed at the next interval: the lease lasts several.
    }
  }

  /** Removes the lease, while the connection can still do it. */
  async stop(): Promise<void> {
    if (this.stopped) return
    this.stopped = true
    clearInterval(this.timer)
    await leasesOf(this.db).deleteOne({ _id: this.instance.id }).catch(() => {})
  }
}
