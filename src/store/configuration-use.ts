import { hostname } from 'node:os'
import { answer, answers, caught, type Answers, type Maybe } from '../maybe.js'
import {
  adoptedLine,
  conflictOf,
  LEASE_EXPIRES_MS,
  LEASE_RENEW_MS,
  readConfiguration,
  recordedIn,
  sameConfiguration,
  sitesText,
  type ConfigurationConflictError,
  type ConfigurationStorage,
  type ConfigurationUse,
  type ConflictWith,
  type Instance,
  type LeaseRecord,
  type StoreConfiguration
} from './configuration.js'

// What each use of the store's configuration does, written once for both stores: the resolution
// when a process opens the store, and the lease a serving instance takes then and renews.

/** What opening the store came to: whether its kept state is to be brought up to date, and what to tell the operator. */
export interface Resolution {
  refresh: boolean
  /** The line that says a start changed the store's configuration, or what a take-over did. */
  changed?: string
}

/** Who opens the store: a serving instance, which holds a lease (none for a command or the primary of several workers), and the time leases are judged at (ms). */
export interface Opening {
  instance: Instance | undefined
  now: number
}

/**
 * Resolves the store's configuration as `use` says, in one atomic section but for a read; throws ConfigurationConflictError
 * to refuse. A start that cannot write now (SQLite read-only: 503 until it can) checks the same, and its first renewal takes its lease.
 */
export function resolveConfiguration(storage: ConfigurationStorage, wanted: StoreConfiguration, use: ConfigurationUse, opening: Opening): Maybe<Resolution> {
  if (use === 'ignore') return { refresh: false }
  if (use === 'read') return answers(resolution(storage, wanted, use, opening, false))
  const resolving = () => storage.atomically(() => answers(resolution(storage, wanted, use, opening, true)))
  if (use !== 'adopt') return resolving()
  return caught(resolving, (error) => {
    if (storage.cannotWrite?.(error) !== true) throw error
    return answers(resolution(storage, wanted, use, opening, false))
  })
}

function* resolution(
  storage: ConfigurationStorage,
  wanted: StoreConfiguration,
  use: Exclude<ConfigurationUse, 'ignore'>,
  opening: Opening,
  writing: boolean
): Answers<Resolution> {
  if (use === 'take-over') return { refresh: false, changed: yield* takeOver(storage, opening.now) }
  if (use === 'adopt') yield* takeLease(storage, wanted, opening, writing)
  const stored = yield* answer(storage.stored())
  const recorded = recordedIn(stored)
  // A command uses the configuration the store records, and so does a start that cannot record its own.
  if (recorded !== null && (use !== 'adopt' || !writing)) {
    const conflict = conflictOf(wanted, recorded, 'store', use === 'read' ? 'sites' : 'both')
    if (conflict !== undefined) throw conflict
  }
  if (use === 'read' || !writing) return { refresh: false }
  // A start that changes nothing writes nothing (a SQLite file opened read-only still opens).
  const own = stored.configuration === undefined ? null : readConfiguration(stored.configuration)
  if (own === null || !sameConfiguration(wanted, own)) yield* answer(storage.record(wanted))
  if (recorded === null || sameConfiguration(wanted, recorded)) return { refresh: true }
  return { refresh: true, changed: adoptedLine(recorded, wanted) }
}

/**
 * A start beside the other leases, live or lapsed (a take-over is the operator's act). Its own is written before the others
 * are read, so of two MongoDB starts with other settings both may refuse, never both start; lapsed ones of its configuration go.
 */
function* takeLease(storage: ConfigurationStorage, wanted: StoreConfiguration, { instance, now }: Opening, writing: boolean): Answers<void> {
  const own = writing ? instance : undefined
  if (own !== undefined) yield* answer(storage.putLease(own, wanted, now))
  const lapsed: LeaseRecord[] = []
  for (const lease of byRenewal(yield* answer(storage.leases()))) {
    if (lease.instance.id === instance?.id) continue
    const standing = leaseStanding(lease, now)
    const where: ConflictWith = standing === 'live' ? lease.instance : { lapsed: lease }
    const conflict = lease.configuration === null ? undefined : conflictOf(wanted, lease.configuration, where)
    if (conflict !== undefined) {
      if (own !== undefined) yield* answer(storage.removeLease(own.id))
      throw conflict
    }
    if (standing === 'lapsed') lapsed.push(lease)
  }
  if (writing) for (const lease of lapsed) yield* answer(storage.removeLease(lease.instance.id, lease.renewedAt))
}

/** Removes the lapsed leases, never a live one's (`tracer take-over`); ends with the line that says so. */
function* takeOver(storage: ConfigurationStorage, now: number): Answers<string> {
  const leases = byRenewal(yield* answer(storage.leases()))
  const removed = leases.filter((lease) => leaseStanding(lease, now) === 'lapsed')
  // Only if not renewed since it was read: a holder that renewed meanwhile keeps its lease.
  for (const lease of removed) yield* answer(storage.removeLease(lease.instance.id, lease.renewedAt))
  const live = leases.length - removed.length
  const what =
    removed.length === 0
      ? 'No lapsed lease: there was nothing to take over.'
      : `Removed ${removed.length} lapsed lease${removed.length === 1 ? '' : 's'} (${removed.map(leaseText).join('; ')}): the next start may record its own configuration.`
  return live === 0 ? what : `${what} ${live} live instance${live === 1 ? '' : 's'} still hold${live === 1 ? 's' : ''} a lease, which only stopping ${live === 1 ? 'it' : 'them'} removes.`
}

/** Most recently renewed first: the first conflict a start names is the likeliest to be live. */
const byRenewal = (leases: readonly LeaseRecord[]) => [...leases].sort((a, b) => b.renewedAt - a.renewedAt)

const leaseText = ({ instance, configuration, renewedAt }: LeaseRecord) =>
  `pid ${instance.pid} on ${instance.host}, last renewed ${new Date(renewedAt).toISOString()}${configuration === null ? '' : `, TRACER_SITES ${sitesText(configuration)}`}`

/** Renews a serving lease every LEASE_RENEW_MS; one that finds another configuration recorded (a take-over) tells `lost`: stop serving. */
export class InstanceLease {
  private readonly timer: NodeJS.Timeout
  private stopped = false

  constructor(
    private readonly storage: ConfigurationStorage,
    private readonly instance: Instance,
    private readonly configuration: StoreConfiguration,
    private readonly clock: () => number,
    private readonly lost: (error: ConfigurationConflictError) => void,
    /** Once the lease is removed: SQLite closes the connection it renewed on, its own. */
    private readonly released: () => void = () => {}
  ) {
    this.timer = setInterval(() => void this.renew(), LEASE_RENEW_MS).unref()
  }

  /** One renewal; a lock or an error of the store only delays it to the next (the lease lasts several). */
  renew(): Maybe<void> {
    if (this.stopped) return
    return caught(() => answers(this.renewal()), () => {})
  }

  private *renewal(): Answers<void> {
    const recorded = recordedIn(yield* answer(this.storage.stored()))
    const conflict = recorded === null ? undefined : conflictOf(this.configuration, recorded, 'taken-over')
    if (conflict !== undefined) {
      yield* answer(this.stop())
      return this.lost(conflict)
    }
    // Stopped while the store answered (MongoDB): a renewal now would write the lease back.
    if (!this.stopped) yield* answer(this.storage.putLease(this.instance, this.configuration, this.clock()))
  }

  /** Removes the lease while the store can still do it, so another configuration may start at once. */
  stop(): Maybe<void> {
    if (this.stopped) return
    this.stopped = true
    clearInterval(this.timer)
    // One that cannot be removed is left to lapse.
    const removed = caught(() => this.storage.removeLease(this.instance.id), () => {})
    if (removed instanceof Promise) return removed.then(() => this.released())
    this.released()
  }
}

/** Whether the lease's holder runs on this host: another program's lock may hold up its renewals, which is no end of its claim. */
function holderRuns({ host, pid }: Instance): boolean {
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
const leaseStanding = (lease: LeaseRecord, now: number): 'live' | 'lapsed' =>
  lease.renewedAt > now - LEASE_EXPIRES_MS || holderRuns(lease.instance) ? 'live' : 'lapsed'
