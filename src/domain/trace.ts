import { CLASSIFICATION_STAGE, traceKey, type PipelineStage, type Sites, type StageStatus } from '../vocabulary.js'
import { InputError } from './input-error.js'
import type { TraceRecord } from './records.js'

export type TraceOutput = { event_no: number; update_timestamp: number } & Record<string, StageStatus | number>

/** The trace as clients read it: every key of the configured sites, only `complete` or `incomplete`, no other key. */
export function traceOutput(eventNo: number, stored: TraceRecord | null, sites: Sites): TraceOutput {
  const output: Record<string, StageStatus | number> = { event_no: eventNo }
  for (const key of sites.traceKeys) output[key] = storedStatus(stored, key)
  output.update_timestamp = numberOr(stored?.update_timestamp, 0)
  return output as TraceOutput
}

/** One key of a stored trace as read: `not_required` reads `complete`, as nothing is pending; anything else but `complete` reads `incomplete`. */
export function storedStatus(stored: TraceRecord | null, key: string): StageStatus {
  const value = stored?.[key]
  return value === 'complete' || value === 'not_required' ? 'complete' : 'incomplete'
}

/** The key an update-trace request sets; the classification stage ignores the site, the others need a configured one. */
export function updatedKey(stage: PipelineStage, site: string, sites: Sites): string {
  if (stage !== CLASSIFICATION_STAGE && !sites.includes(site)) throw new InputError(['site'], `must be one of ${sites.names.join(', ')}`)
  return traceKey(stage, site)
}

/** A new trace as both stores write it: every key of the configured sites `incomplete`. */
export function newTraceDocument(sites: Sites, eventNo: number, now: number): TraceRecord {
  const document: TraceRecord = { event_no: eventNo }
  for (const key of sites.traceKeys) document[key] = 'incomplete'
  document.create_timestamp = now
  document.update_timestamp = now
  return document
}

/** A stored number, or the fallback when another writer left something else (the MongoDB adapter unwraps BSON numbers). */
export function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback
}
