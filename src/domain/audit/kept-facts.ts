import type { HeartbeatInput } from '../../../schemas/heartbeats.js'
import { CLASSIFICATION_KEY, STAGES, stageKey, type Sites, type Stage, type StageStatus } from '../../vocabulary.js'
import { datatrailMemberOutput, heartbeatOutput } from '../event-status.js'
import type { EventRecord, TraceRecord } from '../records.js'
import { storedStatus } from '../trace.js'
import { classificationIn } from '../events.js'
import { requestedSites } from './requested-sites.js'

/** What the rules read of a site's datatrail member; `missing_files` counts the files it lists as missing. */
export interface MemberFacts {
  registered: boolean
  num_files: number
  missing_files: number
}

export interface KeptSite {
  stages: Record<Stage, StageStatus>
  member: MemberFacts
  /** The finished heartbeat with the highest heartbeat_id, or null. */
  last_finished: { heartbeat_id: number; total_data_files: number } | null
  /** The heartbeat with the highest heartbeat_id among those that report an error, or null. */
  last_error: { heartbeat_id: number; error: string } | null
}

export interface KeptEvent {
  timestamp: number
  snr: number
  known_source_name: string
  tsar_classification: string | null
  /** Configured sites the actions ask baseband data from, in configured order. */
  requested: string[]
  /** In the window audit: its actions ask for baseband data (any site, configured or not). */
  listed: boolean
}

/** What the rules read of one event, kept up to date by each write (`apply…`), for every configured site; `factsOf` checks it. */
export interface KeptFacts {
  event_no: number
  /** Null until the event itself is written (a trace or a heartbeat may come first). */
  event: KeptEvent | null
  classification: StageStatus
  /** Only the configured sites of which something is known, to keep a row small (`compact`; `siteFacts` reads an absent one). */
  sites: Record<string, KeptSite>
  /** When each audited key was first recorded complete (a transition to `complete`), s since the epoch. */
  first_completions: Record<string, number>
}

function emptySite(): KeptSite {
  const stages = Object.fromEntries(STAGES.map((stage) => [stage, 'incomplete'])) as Record<Stage, StageStatus>
  return { stages, member: { registered: false, num_files: 0, missing_files: 0 }, last_finished: null, last_error: null }
}

export function emptyFacts(eventNo: number): KeptFacts {
  return { event_no: eventNo, event: null, classification: 'incomplete', sites: {}, first_completions: {} }
}

const EMPTY_SITE: Readonly<KeptSite> = Object.freeze(emptySite())

export const siteFacts = (facts: KeptFacts, site: string): Readonly<KeptSite> => (Object.hasOwn(facts.sites, site) ? facts.sites[site]! : EMPTY_SITE)

function siteToChange(facts: KeptFacts, site: string): KeptSite {
  if (!Object.hasOwn(facts.sites, site)) facts.sites[site] = emptySite()
  return facts.sites[site]!
}

const isEmptySite = (site: KeptSite) =>
  site.last_finished === null &&
  site.last_error === null &&
  !site.member.registered &&
  site.member.num_files === 0 &&
  site.member.missing_files === 0 &&
  STAGES.every((stage) => site.stages[stage] === 'incomplete')

/** Leaves out the sites of which nothing is known: kept facts are compared with those made from the records, so they need one form. */
export function compact(facts: KeptFacts): KeptFacts {
  for (const [site, kept] of Object.entries(facts.sites)) if (isEmptySite(kept)) delete facts.sites[site]
  return facts
}

type AuditedKey = { site: null } | { site: string; stage: Stage }

const keyMaps = new WeakMap<Sites, Map<string, AuditedKey>>()

function auditedKeys(sites: Sites): Map<string, AuditedKey> {
  let keys = keyMaps.get(sites)
  if (keys === undefined) {
    keys = new Map<string, AuditedKey>([[CLASSIFICATION_KEY, { site: null }]])
    for (const site of sites.names) for (const stage of STAGES) keys.set(stageKey(stage, site), { site, stage })
    keyMaps.set(sites, keys)
  }
  return keys
}

export const isAuditedKey = (key: string, sites: Sites) => auditedKeys(sites).has(key)

export type FactsOfEvent = Pick<EventRecord, 'timestamp' | 'snr' | 'known_source_name' | 'tsar_classification' | 'actions' | 'baseband_requested'>

export function applyEvent(facts: KeptFacts, event: FactsOfEvent, sites: Sites): void {
  facts.event = {
    timestamp: event.timestamp,
    snr: event.snr,
    known_source_name: event.known_source_name,
    tsar_classification: classificationIn(event.tsar_classification),
    requested: requestedSites(event.actions, sites),
    listed: event.baseband_requested
  }
}

/** One key of the trace set to `status`; `changedAt` when the write recorded a transition (the value changed), in s. */
export function applyStatus(facts: KeptFacts, key: string, status: unknown, changedAt: number | undefined, sites: Sites): void {
  const audited = auditedKeys(sites).get(key)
  if (audited === undefined) return
  const stored = storedStatus({ [key]: status }, key)
  if (audited.site === null) facts.classification = stored
  else siteToChange(facts, audited.site).stages[audited.stage] = stored
  if (changedAt !== undefined) applyTransition(facts, { key, to: status, at: changedAt }, sites)
}

/** A whole trace document written (a bulk load, or another program's write): every stage read again. */
export function applyTrace(facts: KeptFacts, trace: TraceRecord | null, sites: Sites): void {
  facts.classification = storedStatus(trace, CLASSIFICATION_KEY)
  for (const site of sites.names) {
    for (const stage of STAGES) siteToChange(facts, site).stages[stage] = storedStatus(trace, stageKey(stage, site))
  }
}

/** A transition recorded in the trace's history: the earliest to `complete` of each key is kept. */
export function applyTransition(facts: KeptFacts, { key, to, at }: { key: string; to: unknown; at: number }, sites: Sites): void {
  if (to !== 'complete' || !isAuditedKey(key, sites)) return
  const seen = facts.first_completions[key]
  if (seen === undefined || at < seen) facts.first_completions[key] = at
}

/** A datatrail member written (it replaces the member as stored before). */
export function applyMember(facts: KeptFacts, member: string, value: Record<string, unknown> | undefined, sites: Sites): void {
  const site = sites.names.find((name) => sites.basebandKeyOf(name) === member)
  if (site === undefined) return
  const output = datatrailMemberOutput(value)
  siteToChange(facts, site).member = { registered: output.registered, num_files: output.num_files, missing_files: output.missing_files.length }
}

/** A heartbeat stored (heartbeats are only ever added: one already stored is never applied again). */
export function applyHeartbeat(facts: KeptFacts, stored: HeartbeatInput | Record<string, unknown>, sites: Sites): void {
  const heartbeat = heartbeatOutput(stored)
  // A site name is another writer's text: only a configured site's heartbeats count.
  if (!sites.includes(heartbeat.site)) return
  const site = siteToChange(facts, heartbeat.site)
  const id = heartbeat.heartbeat_id
  if (heartbeat.received.finished_time !== null && (site.last_finished === null || id > site.last_finished.heartbeat_id)) {
    site.last_finished = { heartbeat_id: id, total_data_files: heartbeat.received.total_data_files }
  }
  const error = heartbeat.sent.error ?? ''
  if (error !== '' && (site.last_error === null || id > site.last_error.heartbeat_id)) site.last_error = { heartbeat_id: id, error }
}

export interface EventRecords {
  event: FactsOfEvent | null
  trace: TraceRecord | null
  datatrail: readonly { member: string; value: Record<string, unknown> }[]
  heartbeats: readonly { heartbeat: HeartbeatInput | Record<string, unknown> }[]
  transitions: readonly { key: string; to: unknown; at: number }[]
}

/** The facts made from the records themselves: what the kept facts must always equal. */
export function factsOf(eventNo: number, records: EventRecords, sites: Sites): KeptFacts {
  const facts = emptyFacts(eventNo)
  if (records.event !== null) applyEvent(facts, records.event, sites)
  applyTrace(facts, records.trace, sites)
  for (const transition of records.transitions) applyTransition(facts, transition, sites)
  // The last write of a member wins, as in a Map made of the rows.
  for (const { member, value } of records.datatrail) applyMember(facts, member, value, sites)
  for (const { heartbeat } of records.heartbeats) applyHeartbeat(facts, heartbeat, sites)
  return compact(facts)
}
