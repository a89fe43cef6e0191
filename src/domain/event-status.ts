import type { DatatrailMember } from '../../schemas/datatrail.js'
import type { Heartbeat } from '../../schemas/heartbeats.js'
import type { Sites } from '../vocabulary.js'
import { actionsOutput, NO_ACTIONS, UNCLASSIFIED } from './events.js'
import type { EventParts } from './records.js'
import { numberOr, traceOutput } from './trace.js'

/** One event's status, or null when nothing is known of it; what was never written reads as its empty default. */
export function compileEventStatus(eventNo: number, parts: EventParts, sites: Sites) {
  const { event, trace, datatrail, heartbeats } = parts
  if (event === null && trace === null && datatrail.length === 0 && parts.heartbeatTotal === 0) return null
  const traceOut = traceOutput(eventNo, trace, sites)
  const members = new Map(datatrail.map((item) => [item.member, item.value]))
  return {
    actions: event === null ? NO_ACTIONS : actionsOutput(event.actions, sites),
    tsar_classification: event?.tsar_classification ?? UNCLASSIFIED,
    datatrail: Object.fromEntries(sites.dataProducts.map((member) => [member, datatrailMemberOutput(members.get(member))])),
    trace: traceOut,
    heartbeats: heartbeats.map((heartbeat) => heartbeatOutput(heartbeat.heartbeat)),
    event_no: eventNo,
    update_timestamp: Math.max(
      event?.update_timestamp ?? 0,
      traceOut.update_timestamp,
      parts.heartbeatsUpdated,
      ...datatrail.map((item) => item.update_timestamp)
    )
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object'
const stringOr = (value: unknown, fallback: string) => (typeof value === 'string' ? value : fallback)
const strings = (value: unknown) => (Array.isArray(value) ? value.filter((item) => typeof item === 'string') : [])
const isoOrNull = (value: unknown) => (value instanceof Date ? value.toISOString() : typeof value === 'string' ? value : null)

/** A member with all six fields; documents written by other programs may lack some. */
export function datatrailMemberOutput(stored: Record<string, unknown> | undefined): DatatrailMember {
  const dataset = isObject(stored?.larger_dataset) ? stored.larger_dataset : {}
  const larger_dataset: DatatrailMember['larger_dataset'] = {}
  for (const key of ['name', 'scope', 'deletion_policy'] as const) {
    if (typeof dataset[key] === 'string') larger_dataset[key] = dataset[key]
  }
  if (Array.isArray(dataset.preferred_storage_elements)) {
    larger_dataset.preferred_storage_elements = strings(dataset.preferred_storage_elements)
  }
  const numFiles = numberOr(stored?.num_files, 0)
  return {
    registered: stored?.registered === true,
    should_be_at_minoc: stored?.should_be_at_minoc === true,
    larger_dataset,
    data_path: stringOr(stored?.data_path, ''),
    num_files: Number.isSafeInteger(numFiles) && numFiles >= 0 ? numFiles : 0,
    missing_files: strings(stored?.missing_files)
  }
}

/** The record as the interface document shows it: no event_no, every member typed. */
export function heartbeatOutput(stored: Record<string, unknown>): Heartbeat {
  const sent = isObject(stored.sent) ? stored.sent : {}
  const received = isObject(stored.received) ? stored.received : {}
  return {
    heartbeat_id: numberOr(stored.heartbeat_id, 0),
    site: stringOr(stored.site, ''),
    sent: {
      trigger_time: isoOrNull(sent.trigger_time) ?? '',
      error: sent.error === null || sent.error === undefined ? null : typeof sent.error === 'string' ? sent.error : JSON.stringify(sent.error)
    },
    received: {
      total_data_files: numberOr(received.total_data_files, 0),
      dir_size_gb: numberOr(received.dir_size_gb, 0),
      finished_time: isoOrNull(received.finished_time),
      heartbeat_sent_unix_s: numberOr(received.heartbeat_sent_unix_s, 0)
    }
  }
}
