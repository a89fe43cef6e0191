import type { HeartbeatInput } from '../../schemas/heartbeats.js'
import { CLASSIFICATION_KEY, STAGES, type StoredTrace } from '../domain/trace.js'
import type { StoredDatatrail } from '../store/port.js'
import { HEARTBEAT_IDS_PER_EVENT, type DemoLayout } from './layout.js'
import { FILES_PER_DUMP, Inconsistency, type BasebandPlan } from './plan.js'
import { round2, type Random } from './random.js'

const REPLICATION = STAGES.length - 1

/** What the parts of one baseband event share. Times: ms for the event, s for write times. */
export interface PartsContext {
  layout: DemoLayout
  plan: BasebandPlan
  random: Random
  eventNo: number
  timestamp: number
  classified: boolean
  nowSec: number
}

/** The trace with every key the service outputs, in its order, plus the pipeline's timestamps. */
export function demoTrace({ layout, plan, random, eventNo, timestamp, classified, nowSec }: PartsContext): StoredTrace {
  const trace: StoredTrace = { event_no: eventNo, [CLASSIFICATION_KEY]: classified ? 'complete' : 'incomplete' }
  let steps = 0
  for (let stage = 0; stage < STAGES.length; stage++) {
    const keys = layout.stageKeys[stage]!
    for (let site = 0; site < keys.length; site++) {
      const done = plan.progress[site]!
      let status: string
      if (done < 0) status = plan.notRequired[site] === 1 ? 'not_required' : 'incomplete'
      else if (stage === REPLICATION && plan.noReplication[site] === 1) status = 'not_required'
      else status = stage < done ? 'complete' : 'incomplete'
      if (status === 'complete') steps++
      trace[keys[site]!] = status
    }
  }
  const created = Math.min(timestamp / 1000 + 2 + random() * 20, nowSec)
  trace.create_timestamp = created
  // Each completed stage took minutes; the last one is the trace's latest write.
  trace.update_timestamp = Math.min(created + steps * 300 * (0.5 + random()), nowSec)
  return trace
}

/** One member for each site that dumped data, agreeing with the trace unless the plan says not. */
export function demoDatatrail(context: PartsContext, date: string, out: StoredDatatrail[]): void {
  const { layout, plan, random, eventNo, timestamp, nowSec } = context
  const [year, month, day] = date.split('-') as [string, string, string]
  for (let site = 0; site < layout.sites.length; site++) {
    if (!plan.dumped(site)) continue
    const registered = plan.registered(site) !== (site === 0 && plan.inconsistency === Inconsistency.registered)
    const dataPath = `/data/${layout.sites[site]}/baseband/raw/${year}/${month}/${day}/astro_${eventNo}`
    const missing = plan.missing[site]!
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
      num_files: FILES_PER_DUMP - missing,
      missing_files: missingFiles(dataPath, eventNo, missing, random)
    }
    const written = Math.min(timestamp / 1000 + 1800 + random() * 3600, nowSec)
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
  const { layout, plan, random, eventNo, timestamp } = context
  for (let site = 0; site < layout.sites.length; site++) {
    if (!plan.dumped(site)) continue
    const converted = plan.converted(site)
    const files = FILES_PER_DUMP - plan.missing[site]!
    const trigger = timestamp + 2000 + random() * 8000
    const finished = converted ? trigger + (10 + random() * 50) * MINUTE_MS : null
    let error: string | null = null
    if (site === 0 && plan.inconsistency === Inconsistency.heartbeatError) error = 'timeout: no data written within 3600 s'
    else if (!converted && random() < 0.5) error = `conversion failed: ${FILES_PER_DUMP - files} files unreadable`
    out.push({
      event_no: eventNo,
      heartbeat_id: eventNo * HEARTBEAT_IDS_PER_EVENT + site,
      site: layout.sites[site]!,
      sent: { trigger_time: new Date(trigger).toISOString(), error },
      received: {
        total_data_files: files,
        dir_size_gb: round2(files * (0.05 + 0.02 * random())),
        finished_time: finished === null ? null : new Date(finished).toISOString(),
        heartbeat_sent_unix_s: Math.round((finished ?? trigger + 60 * MINUTE_MS) + random() * 5000) / 1000
      }
    })
  }
}
