import { randomUUID } from 'node:crypto'
import { hostname } from 'node:os'
import { ConfigError } from '../config.js'
import type { StageDeadlines } from '../domain/stage-deadlines.js'
import type { Maybe } from '../maybe.js'
import { PIPELINE_STAGES } from '../vocabulary.js'

// One configuration per store, the sites and deadlines its kept state is made for, held by the
// serving instances' leases (docs/configuration.md, "Changing the sites or the deadlines").

/** What the derived state of a store is made for: TRACER_SITES and STAGE_DEADLINES. */
export interface StoreConfiguration {
  sites: readonly string[]
  deadlines: StageDeadlines
}

/**
 * How opening the store treats its configuration: `adopt` (a server's start) is refused beside a live
 * instance of another, else records its own and makes the kept state again; `write` (seed, import) is
 * refused when the store records another, and brings the kept state up to date; `read` (audit) is refused
 * for other sites, never other deadlines (a report holds none, `stuck` is judged as read), and writes
 * nothing; `ignore` (users) compares nothing; `take-over` removes the lapsed leases, never a live one.
 */
export type ConfigurationUse = 'adopt' | 'write' | 'read' | 'ignore' | 'take-over'

export interface ConfigurationOptions {
  /** `adopt` unless given (a server's start, or the primary of several workers). */
  configuration?: ConfigurationUse
  instance?: Instance
  /** Told when the start changed the store's configuration or made its kept state again. */
  notify?: (line: string) => void
  /** Told when the instance finds the store's configuration changed under it: it must stop serving. */
  lost?: (error: ConfigurationConflictError) => void
}

export const LEASE_RENEW_MS = 5_000
/** A lease not renewed for this long, whose holder cannot be seen to run on this host, is lapsed. */
export const LEASE_EXPIRES_MS = 4 * LEASE_RENEW_MS

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

/** What each store gives configuration-use.ts: reads and writes, no decision. */
export interface ConfigurationStorage {
  /** As stored (recordedIn reads it). */
  stored(): Maybe<StoredConfiguration>
  record(configuration: StoreConfiguration): Maybe<void>
  leases(): Maybe<LeaseRecord[]>
  putLease(instance: Instance, configuration: StoreConfiguration, renewedAt: number): Maybe<void>
  /** Removes a lease; given `renewedAt`, only if it was not renewed since it was read so. */
  removeLease(id: string, renewedAt?: number): Maybe<void>
  /** A start's checks and writes as one: SQLite in one IMMEDIATE transaction; MongoDB as they come (see takeLease). */
  atomically<T>(work: () => Maybe<T>): Maybe<T>
  /** Whether `error` says the store cannot be written now (SQLite: a file it could only open read-only). */
  cannotWrite?(error: unknown): boolean
}

/** The store's own record (`configuration`), or on a store of an earlier release, its audit's signatures (sites in `facts`, deadlines in `looks`). */
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

/** Whose configuration a process's is held against: a live instance, a lapsed lease, the store's record, or that record changed under a serving instance. */
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

/** The refusal when `here` is not `there` in `settings`, naming the first setting that differs; `where` says whose `there` is. */
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

export function adoptedLine(from: StoreConfiguration, to: StoreConfiguration): string {
  const changed = differences(to, from).map(({ setting, here, there }) => `${setting} ${there} -> ${here}`)
  return `The store's configuration changed (${changed.join('; ')}): its kept audit and output texts are made again for it.`
}
