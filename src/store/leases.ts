import { hostname } from 'node:os'
import { conflictOf, LEASE_EXPIRES_MS, sitesText, type ConflictWith, type Instance, type LeaseRecord, type StoreConfiguration } from './configuration.js'

/*
 * How a start judges the other instances' leases (store/configuration.ts), the same on both
 * adapters: they read and write the leases, these decide.
 */

/**
 * Whether the lease's holder runs: on this host, a process with its pid exists. Another program's
 * lock can keep a serving instance from renewing for as long as it is held, which is an outage the
 * instance serves through, not the end of its claim on the store.
 */
export function holderRuns({ host, pid }: Instance): boolean {
  if (host !== hostname() || !Number.isSafeInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: the process exists, as another user's.
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Live: renewed in time, or its holder runs. Lapsed: neither, and not removed by a clean stop. */
export const leaseStanding = (lease: LeaseRecord, now: number): 'live' | 'lapsed' =>
  lease.renewedAt > now - LEASE_EXPIRES_MS || holderRuns(lease.instance) ? 'live' : 'lapsed'

/**
 * A start that adopts `wanted`, beside the other instances' leases: throws the conflict with the
 * first whose configuration differs, live or lapsed (taking over from a lapsed one is the
 * operator's act, `take-over`); returns the lapsed leases of the same configuration, to remove.
 */
export function leasesBeside(wanted: StoreConfiguration, others: readonly LeaseRecord[], now: number): LeaseRecord[] {
  const lapsed: LeaseRecord[] = []
  for (const lease of others) {
    const standing = leaseStanding(lease, now)
    const where: ConflictWith = standing === 'live' ? lease.instance : { lapsed: lease }
    const conflict = lease.configuration === null ? undefined : conflictOf(wanted, lease.configuration, where)
    if (conflict !== undefined) throw conflict
    if (standing === 'lapsed') lapsed.push(lease)
  }
  return lapsed
}

/** The lapsed leases a take-over removes, and the line that says what it did. */
export function takenOver(leases: readonly LeaseRecord[], now: number): { removed: LeaseRecord[]; line: string } {
  const removed = leases.filter((lease) => leaseStanding(lease, now) === 'lapsed')
  const live = leases.length - removed.length
  const what =
    removed.length === 0
      ? 'No lapsed lease: there was nothing to take over.'
      : `Removed ${removed.length} lapsed lease${removed.length === 1 ? '' : 's'} (${removed.map(leaseText).join('; ')}): the next start may record its own configuration.`
  return { removed, line: live === 0 ? what : `${what} ${live} live instance${live === 1 ? '' : 's'} still hold${live === 1 ? 's' : ''} a lease, which only stopping ${live === 1 ? 'it' : 'them'} removes.` }
}

const leaseText = ({ instance, configuration, renewedAt }: LeaseRecord) =>
  `pid ${instance.pid} on ${instance.host}, last renewed ${new Date(renewedAt).toISOString()}${configuration === null ? '' : `, TRACER_SITES ${sitesText(configuration)}`}`
