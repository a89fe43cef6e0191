import type { Actions, EventInput } from '../../schemas/events.js'
import type { Sites } from '../vocabulary.js'
import { InputError } from './input-error.js'
import type { EventRecord } from './records.js'
import { readUtcTime, toIsoUtc } from './time-window.js'

export const UNCLASSIFIED = 'unclassified'
/** The classification an event record holds; null for none, `unclassified` (what a read shows for none) or an empty text. */
export const classificationIn = (value: string | null | undefined): string | null =>
  typeof value === 'string' && value !== '' && value !== UNCLASSIFIED ? value : null

export const NO_ACTIONS: Actions = { want: {}, got: {} }

/** Baseband data is asked for when actions.want sets `baseband` or any `{site}_baseband`. */
export function wantsBaseband(actions: Actions, sites: Sites): boolean {
  return sites.basebandKeys.some((key) => actions.want[key] === true)
}

/** Whether stored actions, of any shape, ask for baseband data as a client is sent them: what SQLite's `baseband_requested` is held to. */
export const asksBaseband = (actions: unknown, sites: Sites): boolean => wantsBaseband(actionsOutput(actions, sites), sites)

export function toEventRecord(input: EventInput, sites: Sites, now: number): EventRecord {
  const reading = readUtcTime(input.timestamp_utc)
  if ('refused' in reading) throw new InputError(['timestamp_utc'], reading.refused)
  const timestamp = reading.time
  const actions = input.actions ?? NO_ACTIONS
  return {
    event_no: input.event_no,
    timestamp,
    snr: input.snr,
    dm: input.dm ?? null,
    known_source_name: input.known_source_name,
    tsar_classification: input.tsar_classification ?? null,
    actions,
    baseband_requested: wantsBaseband(actions, sites),
    update_timestamp: now
  }
}

/** Only boolean members known for the configured sites: other writers may have stored more. */
export function actionsOutput(actions: unknown, sites: Sites): Actions {
  const flags = (value: unknown) => {
    const output: Record<string, boolean> = {}
    if (value === null || typeof value !== 'object') return output
    for (const key of sites.dataProducts) {
      const flag = (value as Record<string, unknown>)[key]
      if (typeof flag === 'boolean') output[key] = flag
    }
    return output
  }
  const source = (actions ?? {}) as { want?: unknown; got?: unknown }
  return { want: flags(source.want), got: flags(source.got) }
}

export function eventOutput(event: EventRecord, sites: Sites) {
  return {
    event_no: event.event_no,
    timestamp_utc: toIsoUtc(event.timestamp),
    snr: event.snr,
    dm: event.dm,
    known_source_name: event.known_source_name,
    tsar_classification: event.tsar_classification ?? UNCLASSIFIED,
    actions: actionsOutput(event.actions, sites)
  }
}
