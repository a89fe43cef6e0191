import { randomUUID } from 'node:crypto'
import { hostname } from 'node:os'
import { ConfigError } from '../config.js'
import type { StageDeadlines } from '../domain/stage-deadlines.js'
import type { Maybe } from '../maybe.js'
import { PIPELINE_STAGES } from '../vocabulary.js'

/*
 * One configuration per store. The kept audit and the output texts are made for some sites and
 * deadlines; a store records which, and every process that opens it says how it uses that record
 * (ConfigurationUse). Serving instances hold a lease (a row or document renewed every
 * LEASE_RENEW_MS, removed on a clean shutdown): an instance whose configuration differs from that
 * of a live lease does not start. See docs/configuration.md, "Changing the sites or the deadlines".
 * What each use does is decided once for both stores (configuration-use.ts), over
 * what each gives (ConfigurationStorage).
 */

/** What the derived state of a store is made for: TRACER_SITES and STAGE_DEADLINES. */
export interface StoreConfiguration {
  sites: readonly string[]
  deadlines: StageDeadlines
}

/**
 * How opening the store treats its configuration:
 * - `adopt` (a server's start): refused when a live instance has another configuration; otherwise
 *   records this one and makes the kept audit and output texts again if they were made otherwise.
 * - `write` (commands that write records: seed, import): refused when the store records another
 *   configuration; brings the kept state up to date with this release, as a server would.
 * - `read` (commands that read: audit): refused when the store records other sites; writes
 *   nothing, whatever it finds. Other deadlines are no reason to refuse: what is kept for a
 *   window read (a report, or a fixed audit) holds no deadline, and `stuck` is judged as it is
 *   read, so such a command audits honestly under its own deadlines.
 * - `ignore` (users): compares nothing and writes nothing but what the command itself writes.
 * - `take-over` (`tracer take-over`, an operator's explicit act): removes the leases of instances
 *   that stopped without removing theirs (lapsed, see leaseStanding), never a live one's, so that
 *   the next start may record another configuration; writes nothing else.
 */
export type ConfigurationUse = 'adopt' | 'write' | 'read' | 'ignore' | 'take-over'

/** How a process opens a store as to its configuration, and what it is told: the same on both stores. */
export interface ConfigurationOptions {
  /** How it treats the store's configuration: `adopt` unless given (a server's start; the primary of several workers opens the store so). Commands say what they do. */
  configuration?: ConfigurationUse
  /** A serving instance: holds a lease with its configuration while the store is open. */
  instance?: Instance
  /** Told when the start changed the store's configuration or made its kept state again. */
  notify?: (line: string) => void
  /** Told when the instance finds the store's configuration changed under it: it must stop serving. */
  lost?: (error: ConfigurationConflictError) => void
}

/** How often a serving instance renews its lease. */
export const LEASE_RENEW_MS = 5_000
/**
 * A lease not renewed for this long, whose holder does not run on this host, is lapsed: its
 * instance stopped without removing it (killed, or its host lost), or cannot be seen to run.
 */
export const LEASE_EXPIRES_MS = 4 * LEASE_RENEW_MS

/** A serving instance, as its lease names it. */
export interface Instance {
  id: string
  host: string
  pid: number
}

export const thisInstance = (): Instance => ({ id: randomUUID(), host: hostname(), pid: process.pid })

/** A lease as a store keeps it; `configuration` is null when the stored one cannot be read. */
export interface LeaseRecord {
  instance: Instance
  configuration: StoreConfiguration | null
  renewedAt: number
}

/**
 * What each store gives the one resolution of its configuration and the renewal of its leases
 * (configuration-use.ts): reads and writes, no decision. SQLite answers at once, on
 * the connection it was made on; MongoDB with promises.
 */
export interface ConfigurationStorage {
  /** The store's record of its configuration, as stored (recordedIn reads it). */
  stored(): Maybe<StoredConfiguration>
  /** Records `configuration` as the store's. */
  record(configuration: StoreConfiguration): Maybe<void>
  /** Every instance's lease. */
  leases(): Maybe<LeaseRecord[]>
  /** Writes an instance's lease with its configuration, or renews it, as renewed at `renewedAt`. */
  putLease(instance: Instance, configuration: StoreConfiguration, renewedAt: number): Maybe<void>
  /** Removes a lease; given `renewedAt`, only if it was not renewed since it was read so. */
  removeLease(id: string, renewedAt?: number): Maybe<void>
  /**
   * Runs a start's checks and writes as one: SQLite in one IMMEDIATE transaction (of two instances
   * starting together, the second sees the first's lease); MongoDB as they come, each write one
   * document's (the lease is written before the others are read: see takeLease, configuration-use.ts).
   */
  atomically<T>(work: () => Maybe<T>): Maybe<T>
  /** Whether `error` says the store cannot be written now (SQLite: a file it could only open read-only). */
  cannotWrite?(error: unknown): boolean
}

/**
 * The store's record of its configuration, as stored: its own (`configuration`), or on a store an
 * earlier release kept the audit of, the signatures that audit was made under (`facts`, which hold
 * its sites; `looks`, its deadlines).
 */
export interface StoredConfiguration {
  configuration?: unknown
  facts?: unknown
  looks?: unknown
}

/** The configuration a store records; null when it records none (a store nothing has made an audit in) or none that reads. */
export function recordedIn({ configuration, facts, looks }: StoredConfiguration): StoreConfiguration | null {
  if (configuration !== undefined) return readConfiguration(configuration)
  const factsMade = (typeof facts === 'string' ? safeParse(facts) : null) as { sites?: unknown } | null
  const looksMade = (typeof looks === 'string' ? safeParse(looks) : null) as { deadlines?: unknown } | null
  if (factsMade === null || looksMade === null) return null
  return readConfiguration({ sites: factsMade.sites, deadlines: looksMade.deadlines ?? looksMade })
}

/** The one line that refuses a process whose configuration is not the store's; runProgram prints it and exits 1. */
export class ConfigurationConflictError extends ConfigError {
  override name = 'ConfigurationConflictError'
}

const DAY = 86_400_000
const HOUR = 3_600_000
const MINUTE = 60_000

/** A deadline as STAGE_DEADLINES writes it, in the largest unit that divides it. */
function durationText(ms: number): string {
  if (ms % DAY === 0) return `${ms / DAY}d`
  if (ms % HOUR === 0) return `${ms / HOUR}h`
  if (ms % MINUTE === 0) return `${ms / MINUTE}m`
  return `${ms / 1000}s`
}

export const sitesText = (configuration: StoreConfiguration) => configuration.sites.join(',')

export const deadlinesText = (configuration: StoreConfiguration) =>
  PIPELINE_STAGES.map((stage) => `${stage}=${durationText(configuration.deadlines[stage])}`).join(',')

/** The settings in which two configurations differ, each with both values as the environment writes them. */
export function differences(
  here: StoreConfiguration,
  there: StoreConfiguration,
  settings: 'both' | 'sites' = 'both'
): { setting: string; here: string; there: string }[] {
  const found = []
  if (sitesText(here) !== sitesText(there)) found.push({ setting: 'TRACER_SITES', here: sitesText(here), there: sitesText(there) })
  if (settings === 'both' && PIPELINE_STAGES.some((stage) => here.deadlines[stage] !== there.deadlines[stage])) {
    found.push({ setting: 'STAGE_DEADLINES', here: deadlinesText(here), there: deadlinesText(there) })
  }
  return found
}

export const sameConfiguration = (a: StoreConfiguration, b: StoreConfiguration) => differences(a, b).length === 0

/**
 * Whose configuration a process's is held against: a live instance (named), an instance whose
 * lease lapsed, the store's record as a command meets it, or as a serving instance finds it
 * changed under it (`taken-over`).
 */
export type ConflictWith = Instance | { lapsed: LeaseRecord } | 'store' | 'taken-over'

function conflictWords(where: ConflictWith): { whose: string; what: string } {
  if (where === 'store') return { whose: 'in the store', what: 'a command uses the configuration the store was made with' }
  if (where === 'taken-over') return { whose: 'in the store', what: 'another start took the store over with it, so this instance stops serving' }
  if ('lapsed' in where) {
    const { instance, renewedAt } = where.lapsed
    return {
      whose: `on an instance of this store that stopped without removing its lease (pid ${instance.pid} on ${instance.host}, last renewed ${new Date(renewedAt).toISOString()})`,
      what: 'if it is gone for good, take the store over with `tracer take-over`, then start again'
    }
  }
  return { whose: `on a live instance of this store (pid ${where.pid} on ${where.host})`, what: 'to change it, stop every instance, then start one with the new setting' }
}

/**
 * The refusal when `here` is not `there` in `settings`, naming the first setting that differs and
 * both values; `where` says whose `there` is.
 */
export function conflictOf(
  here: StoreConfiguration,
  there: StoreConfiguration,
  where: ConflictWith,
  settings: 'both' | 'sites' = 'both'
): ConfigurationConflictError | undefined {
  const [first] = differences(here, there, settings)
  if (first === undefined) return undefined
  const { whose, what } = conflictWords(where)
  return new ConfigurationConflictError(`${first.setting} is ${first.here} here but ${first.there} ${whose}; ${what} (docs/configuration.md: "Changing the sites or the deadlines")`)
}

/** A configuration as a store records it (a document of its own; SQLite's is its JSON), and back; null for a record that is not one. */
export const asRecorded = ({ sites, deadlines }: StoreConfiguration): StoreConfiguration => ({ sites: [...sites], deadlines: { ...deadlines } })

export function readConfiguration(value: unknown): StoreConfiguration | null {
  const parsed = typeof value === 'string' ? safeParse(value) : value
  if (typeof parsed !== 'object' || parsed === null) return null
  const { sites, deadlines } = parsed as { sites?: unknown; deadlines?: unknown }
  if (!Array.isArray(sites) || !sites.every((site) => typeof site === 'string')) return null
  if (typeof deadlines !== 'object' || deadlines === null) return null
  const record = deadlines as Record<string, unknown>
  if (!PIPELINE_STAGES.every((stage) => typeof record[stage] === 'number')) return null
  return { sites, deadlines: Object.fromEntries(PIPELINE_STAGES.map((stage) => [stage, record[stage] as number])) as StageDeadlines }
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return null
  }
}

/** A line for the operator when a start changed the store's configuration. */
export function adoptedLine(from: StoreConfiguration, to: StoreConfiguration): string {
  const changed = differences(to, from).map(({ setting, here, there }) => `${setting} ${there} -> ${here}`)
  return `The store's configuration changed (${changed.join('; ')}): its kept audit and output texts are made again for it.`
}
