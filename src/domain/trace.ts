import { CLASSIFICATION_STAGE, traceKey, type PipelineStage, type Sites, type StageStatus } from '../vocabulary.js'
import { InputError } from './input-error.js'
import type { TraceRecord } from './records.js'

export type TraceOutput = { event_no: number; update_timestamp: number } & Record<string, StageStatus | number>

/**
 * The trace as clients read it: every key of the configured sites present, values only `complete`
 * or `incomplete`. Other stored keys are not output.
 */
export function traceOutput(eventNo: number, stored: TraceRecord | null, sites: Sites): TraceOutput {
  const output: Record<string, StageStatus | number> = { event_no: eventNo }
  for (const key of sites.traceKeys) output[key] = storedStatus(stored, key)
  output.update_timestamp = numberOr(stored?.update_timestamp, 0)
  return output as TraceOutput
}

/**
 * One key of a stored trace (or of none) as read. A stored `not_required` reads `complete`, because
 * nothing is pending for that stage; anything else, or a missing key, reads `incomplete`.
 */
export function storedStatus(stored: TraceRecord | null, key: string): StageStatus {
  const value = stored?.[key]
  return value === 'complete' || value === 'not_required' ? 'complete' : 'incomplete'
}

/** The key an update-trace request sets; the classification stage ignores the site, the others need a configured one. */
export function updatedKey(stage: PipelineStage, site: string, sites: Sites): string {
  if (stage !== CLASSIFICATION_STAGE && !sites.includes(site)) throw new InputError(['site'], `must be one of ${sites.names.join(', ')}`)
  return traceKey(stage, site)
}

/** The document of a new trace, as both stores write it: every key of the configured sites `incomplete`. */
export function newTraceDocument(sites: Sites, eventNo: number, now: number): TraceRecord {
  const document: TraceRecord = { event_no: eventNo }
  for (const key of sites.traceKeys) document[key] = 'incomplete'
  document.create_timestamp = now
  document.update_timestamp = now
  return document
}

/**
 * A stored number, or the fallback when another writer left something else. BSON's wrapped numbers
 * never get here: the MongoDB adapter hands the port plain numbers.
 */
export function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback
}
