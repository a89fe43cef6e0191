import { answer, answers, caught, type Answers, type Maybe } from '../maybe.js'
import {
  adoptedLine,
  conflictOf,
  LEASE_RENEW_MS,
  readConfiguration,
  recordedIn,
  sameConfiguration,
  type ConfigurationConflictError,
  type ConfigurationStorage,
  type ConfigurationUse,
  type Instance,
  type LeaseRecord,
  type StoreConfiguration
} from './configuration.js'
import { leasesBeside, takenOver } from './leases.js'

/*
 * What each use of the store's configuration does (ConfigurationUse, configuration.ts), written
 * once for both stores over what each gives (ConfigurationStorage): the resolution when a process
 * opens the store, the lease a serving instance takes then and renews while it serves. The
 * judgement of the leases is leases.ts's.
 */

/** What opening the store came to: whether its kept state is to be brought up to date (the output texts, the kept audit's rebuild), and what to tell the operator. */
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
 * Resolves what the store's configuration is before anything is made from it, as `use` says
 * (configuration.ts), the same on both stores over what each gives (ConfigurationStorage). Throws
 * ConfigurationConflictError to refuse. Everything but a read is one atomic section of the store's
 * (SQLite: one IMMEDIATE transaction). A start that cannot write now (a SQLite file it could only
 * open read-only; the service serves 503 until it can) makes the same checks with nothing
 * written: its lease is then taken by its first renewal that can write.
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
  // A command uses the configuration the store records, and so does a start that cannot record its
  // own; one that only reads is held to the sites alone (configuration.ts, `read`).
  if (recorded !== null && (use !== 'adopt' || !writing)) {
    const conflict = conflictOf(wanted, recorded, 'store', use === 'read' ? 'sites' : 'both')
    if (conflict !== undefined) throw conflict
  }
  if (use === 'read' || !writing) return { refresh: false }
  // Only when the store's own record is not this one already: a start that changes nothing writes
  // nothing (a SQLite file opened read-only still opens).
  const own = stored.configuration === undefined ? null : readConfiguration(stored.configuration)
  if (own === null || !sameConfiguration(wanted, own)) yield* answer(storage.record(wanted))
  if (recorded === null || sameConfiguration(wanted, recorded)) return { refresh: true }
  return { refresh: true, changed: adoptedLine(recorded, wanted) }
}

/**
 * A start that adopts `wanted`, beside the other instances' leases (leasesBeside), taking its own
 * when it holds one. Its lease is written before the others are read, so that on MongoDB, of two
 * instances starting together with different settings, at least one sees the other: both may
 * refuse, never both start (on SQLite all of it is one IMMEDIATE transaction, and the second sees
 * the first). Refused, it removes its lease again. The lapsed leases of its configuration are
 * removed on the way. With `writing` false (a file that cannot be written now), the same checks
 * with nothing written.
 */
function* takeLease(storage: ConfigurationStorage, wanted: StoreConfiguration, { instance, now }: Opening, writing: boolean): Answers<void> {
  const own = writing ? instance : undefined
  if (own !== undefined) yield* answer(storage.putLease(own, wanted, now))
  const others = byRenewal(yield* answer(storage.leases())).filter((lease) => lease.instance.id !== instance?.id)
  let lapsed: LeaseRecord[]
  try {
    lapsed = leasesBeside(wanted, others, now)
  } catch (conflict) {
    if (own !== undefined) yield* answer(storage.removeLease(own.id))
    throw conflict
  }
  if (writing) for (const lease of lapsed) yield* answer(storage.removeLease(lease.instance.id, lease.renewedAt))
}

/** Removes the lapsed leases, never a live one's (`tracer take-over`); ends with the line that says so. */
function* takeOver(storage: ConfigurationStorage, now: number): Answers<string> {
  const { removed, line } = takenOver(byRenewal(yield* answer(storage.leases())), now)
  // Only if not renewed since it was read: a holder that renewed meanwhile keeps its lease.
  for (const lease of removed) yield* answer(storage.removeLease(lease.instance.id, lease.renewedAt))
  return line
}

/** Most recently renewed first: the first conflict a start names is the likeliest to be live. */
const byRenewal = (leases: readonly LeaseRecord[]) => [...leases].sort((a, b) => b.renewedAt - a.renewedAt)

/**
 * Renews a serving instance's lease (taken by its start, resolveConfiguration) every
 * LEASE_RENEW_MS until stopped, and removes it on a clean stop. Each renewal also holds the store's
 * recorded configuration against the instance's: one that finds another recorded (another start
 * took the store over: an operator's `tracer take-over` while this instance could not be seen to
 * run) is told by `lost` and must stop serving, since its reads would no longer match what the store
 * keeps. A renewal that another program's lock holds up is no such loss: a lease whose holder runs
 * stays live (leaseStanding).
 */
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

  /** Removes the lease, while the store can still do it: the instance stops, and another configuration may start at once. */
  stop(): Maybe<void> {
    if (this.stopped) return
    this.stopped = true
    clearInterval(this.timer)
    const removed = caught(
      () => this.storage.removeLease(this.instance.id),
      // Left to lapse.
      () => {}
    )
    if (removed instanceof Promise) return removed.then(() => this.released())
    this.released()
  }
}
