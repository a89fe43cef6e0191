import type { HeartbeatInput } from '../../schemas/heartbeats.js'
import type { DatatrailRecord, FeedTransition, TraceRecord } from '../domain/records.js'
import { CLASSIFICATION_KEY, STAGES, stageKey, type Sites } from '../vocabulary.js'
import { Fault, FILES_PER_DUMP, type BasebandPlan } from './plan.js'
import { round2, type Random } from './random.js'

const CONVERSION = STAGES.indexOf('baseband_conversion')
const REGISTRATION = STAGES.indexOf('data_registration')
const REPLICATION = STAGES.indexOf('data_replication_to_minoc')
/** Files a registration that ran before the conversion finished can leave out. */
const MAX_UNCOUNTED = 40
/** How far behind the clock of a site with Fault.clockBehind runs: more than any stage takes. */
const CLOCK_BEHIND_MS = 12 * 3_600_000

/** Heartbeat ids are event_no * 64 + site index: unique without a counter (a store allows 64 sites). */
export const HEARTBEAT_IDS_PER_EVENT = 64

/** Every name the generator needs, derived once from the sites: per event it then only picks strings and shares arrays. */
export interface DemoLayout {
  sites: readonly string[]
  /** The actions key and datatrail member of each site's baseband data. */
  members: readonly string[]
  /** Trace keys by stage, then site. */
  stageKeys: readonly (readonly string[])[]
  scopes: readonly string[]
  storageElements: readonly (readonly string[])[]
}

export function demoLayout({ names: sites, basebandKeys }: Sites): DemoLayout {
  return {
    sites,
    members: basebandKeys,
    stageKeys: STAGES.map((stage) => sites.map((site) => stageKey(stage, site))),
    scopes: sites.map((site) => `${site}.event.baseband.raw`),
    // The primary site's data goes to the archive first; an outrigger's stays on site too.
    storageElements: sites.map((site, index) => (index === 0 ? ['MINOC'] : [site.toUpperCase(), 'MINOC']))
  }
}

/** What the parts of one baseband event share. Times: ms for the event, s for write times. */
export interface PartsContext {
  layout: DemoLayout
  plan: BasebandPlan
  random: Random
  eventNo: number
  timestamp: number
  /** How long after the event it was classified, ms; infinite when it was not (yet). */
  classifiedAfter: number
  nowSec: number
}

/**
 * The trace with every key the service outputs, in its order, and the pipeline's timestamps; each
 * complete key's change from `incomplete` goes to `history` when the pipeline made it, for stage latency.
 */
export function demoTrace(context: PartsContext, history: FeedTransition[]): TraceRecord {
  const { layout, plan, random, eventNo, timestamp, classifiedAfter, nowSec } = context
  // A lost update leaves the trace as it was: classified in the event record, incomplete here.
  const classified = Number.isFinite(classifiedAfter) && !plan.classificationLost()
  const trace: TraceRecord = { event_no: eventNo, [CLASSIFICATION_KEY]: classified ? 'complete' : 'incomplete' }
  const completed = (key: string, at: number, by: string) => history.push({ event_no: eventNo, key, from: 'incomplete', to: 'complete', at, by })
  if (classified) completed(CLASSIFICATION_KEY, Math.min((timestamp + classifiedAfter) / 1000, nowSec), 'tsar')
  let latest = 0
  for (let stage = 0; stage < STAGES.length; stage++) {
    const keys = layout.stageKeys[stage]!
    for (let site = 0; site < keys.length; site++) {
      const status = traceStatus(plan, stage, site)
      if (status === 'complete') {
        const after = plan.completedAt(site, stage)
        latest = Math.max(latest, after)
        const at = plan.fault[site] === Fault.clockBehind ? (timestamp + after - CLOCK_BEHIND_MS) / 1000 : Math.min((timestamp + after) / 1000, nowSec)
        completed(keys[site]!, at, 'pipeline')
      }
      trace[keys[site]!] = status
    }
  }
  const created = Math.min(timestamp / 1000 + 2 + random() * 20, nowSec)
  trace.create_timestamp = created
  // The last stage the trace heard of is its latest write.
  trace.update_timestamp = Math.min(Math.max(created, (timestamp + latest) / 1000), nowSec)
  return trace
}

/** What the trace says of a stage at a site: how far the site got, unless a fault lost an update. */
function traceStatus(plan: BasebandPlan, stage: number, site: number): string {
  const done = plan.progress[site]!
  if (done < 0) return plan.notRequired[site] === 1 ? 'not_required' : 'incomplete'
  const fault = plan.fault[site]
  const heardOf = fault === Fault.registrationNotInTrace ? Math.min(done, REGISTRATION) : done
  if (fault === Fault.lostUpdate && stage === plan.lostStage[site]) return 'incomplete'
  // Whether the archive needs a copy is decided when the data is registered.
  if (stage === REPLICATION && plan.noReplication[site] === 1 && heardOf > REGISTRATION) return 'not_required'
  return stage < heardOf ? 'complete' : 'incomplete'
}

/** One member for each site that dumped data, agreeing with the trace unless the site has a fault. */
export function demoDatatrail(context: PartsContext, date: string, out: DatatrailRecord[]): void {
  const { layout, plan, random, eventNo, timestamp, nowSec } = context
  const [year, month, day] = date.split('-') as [string, string, string]
  for (let site = 0; site < layout.sites.length; site++) {
    if (!plan.dumped(site)) continue
    const fault = plan.fault[site]
    const registered = plan.registered(site) && fault !== Fault.registrationNotInDatatrail
    const dataPath = `/data/${layout.sites[site]}/baseband/raw/${year}/${month}/${day}/astro_${eventNo}`
    const missing = plan.missing[site]!
    const uncounted = fault === Fault.fileCountMismatch ? 1 + Math.floor(random() * MAX_UNCOUNTED) : 0
    const value = {
      registered,
      should_be_at_minoc: plan.noReplication[site] === 0,
      larger_dataset: registered
        ? {
            name: `${layout.sites[site]}.baseband.${year}.${month}`,
            scope: layout.scopes[site],
            preferred_storage_elements: layout.storageElements[site],
            deletion_policy: plan.noReplication[site] === 1 ? 'delete_after_90_days' : 'keep'
          }
        : {},
      data_path: dataPath,
      num_files: FILES_PER_DUMP - missing - uncounted,
      missing_files: missingFiles(dataPath, eventNo, missing, random)
    }
    // Written when the dump arrived, and again when the data was registered.
    const after = plan.completedAt(site, registered ? REGISTRATION : 0)
    const written = Math.min((timestamp + after) / 1000 + 1 + random() * 60, nowSec)
    out.push({ event_no: eventNo, member: layout.members[site]!, value, update_timestamp: written })
  }
}

function missingFiles(dataPath: string, eventNo: number, count: number, random: Random): string[] {
  if (count === 0) return []
  const first = Math.floor(random() * (FILES_PER_DUMP - count))
  return Array.from({ length: count }, (_, index) => `${dataPath}/baseband_${eventNo}_${first + index}.h5`)
}

const MINUTE_MS = 60_000

/** The heartbeat each site that dumped data sent back when its dump finished (or failed). */
export function demoHeartbeats(context: PartsContext, out: HeartbeatInput[]): void {
  const { layout, plan, random, eventNo, timestamp, nowSec } = context
  for (let site = 0; site < layout.sites.length; site++) {
    if (!plan.dumped(site)) continue
    const converted = plan.converted(site)
    const files = FILES_PER_DUMP - plan.missing[site]!
    const trigger = timestamp + 2000 + random() * 8000
    const finished = converted ? timestamp + plan.completedAt(site, CONVERSION) : null
    let error: string | null = null
    if (plan.fault[site] === Fault.heartbeatError) error = 'timeout: no data written within 3600 s'
    // A conversion still under way has nothing to report yet; half the failed ones say why.
    else if (!converted && plan.underWay[site] === 0 && random() < 0.5) error = `conversion failed: ${FILES_PER_DUMP - files} files unreadable`
    out.push({
      event_no: eventNo,
      heartbeat_id: eventNo * HEARTBEAT_IDS_PER_EVENT + site,
      site: layout.sites[site]!,
      sent: { trigger_time: new Date(trigger).toISOString(), error },
      received: {
        total_data_files: files,
        dir_size_gb: round2(files * (0.05 + 0.02 * random())),
        finished_time: finished === null ? null : new Date(finished).toISOString(),
        heartbeat_sent_unix_s: Math.min(Math.round((finished ?? trigger + 60 * MINUTE_MS) + random() * 5000) / 1000, nowSec)
      }
    })
  }
}
