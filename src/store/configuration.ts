import { randomUUID } from 'node:crypto'
import { hostname } from 'node:os'
import { ConfigError } from '../config.js'
import type { StageDeadlines } from '../domain/stage-deadlines.js'
import { PIPELINE_STAGES } from '../vocabulary.js'

/*
 * One configuration per store. The kept audit and the output texts are made for some sites and
 * deadlines; a store records which, and every process that opens it says how it uses that record
 * (ConfigurationUse). Serving instances hold a lease (a row or document renewed every
 * LEASE_RENEW_MS, removed on a clean shutdown): an instance whose configuration differs from that
 * of a live lease does not start. See docs/configuration.md, "Changing the sites or the deadlines".
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

/** A configuration as a store records it (JSON), and back; null for a record that is not one. */
export const configurationJson = (configuration: StoreConfiguration) =>
  JSON.stringify({ sites: configuration.sites, deadlines: configuration.deadlines })

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
