/** The four per-site stages of a baseband callback, in pipeline order. */
export const STAGES = [
  'baseband_callback_request',
  'baseband_conversion',
  'data_registration',
  'data_replication_to_minoc'
] as const
export type Stage = (typeof STAGES)[number]

export const CLASSIFICATION_STAGE = 'tsar_classification'
export const CLASSIFICATION_KEY = `stages/${CLASSIFICATION_STAGE}`

/** Every stage in pipeline order: the classification (no site) comes before the four site stages. */
export const PIPELINE_STAGES = [CLASSIFICATION_STAGE, ...STAGES] as const
export type PipelineStage = (typeof PIPELINE_STAGES)[number]

export const STATUSES = ['complete', 'incomplete'] as const
export type StageStatus = (typeof STATUSES)[number]

export const stageKey = (stage: Stage, site: string) => `stages/${stage}/sites/${site}`

/** Every status key of a trace for the configured sites, in output order. */
export function traceKeys(sites: readonly string[]): string[] {
  return [CLASSIFICATION_KEY, ...STAGES.flatMap((stage) => sites.map((site) => stageKey(stage, site)))]
}

/** A trace as stored: flat slash keys (the pipeline's MongoDB shape), whatever else a writer added. */
export type StoredTrace = Record<string, unknown>

export type TraceOutput = { event_no: number; update_timestamp: number } & Record<string, StageStatus | number>

/**
 * The trace as clients read it: every key present, values only `complete` or `incomplete`.
 * A stored `not_required` reads `complete`, because nothing is pending for that stage; anything
 * else, or a missing key, reads `incomplete`. Other stored keys are not output.
 */
export function traceOutput(eventNo: number, stored: StoredTrace | null, keys: readonly string[]): TraceOutput {
  const output: Record<string, StageStatus | number> = { event_no: eventNo }
  for (const key of keys) output[key] = storedStatus(stored, key)
  output.update_timestamp = numberOr(stored?.update_timestamp, 0)
  return output as TraceOutput
}

/** One key of a stored trace (or of none) as read: `not_required` is complete, missing is incomplete. */
export function storedStatus(stored: StoredTrace | null, key: string): StageStatus {
  const value = stored?.[key]
  return value === 'complete' || value === 'not_required' ? 'complete' : 'incomplete'
}

/** A new trace: every key `incomplete`. */
export function initialTrace(keys: readonly string[]): Record<string, StageStatus> {
  return Object.fromEntries(keys.map((key) => [key, 'incomplete' as const]))
}

/** The key an update-trace request sets; the classification stage has no site. */
export function keyForUpdate(stage: Stage | typeof CLASSIFICATION_STAGE, site: string): string {
  return stage === CLASSIFICATION_STAGE ? CLASSIFICATION_KEY : stageKey(stage, site)
}

/**
 * A stored number, or the fallback when another writer left something else. BSON's wrapped numbers
 * never get here: the MongoDB adapter hands the port plain numbers.
 */
export function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback
}
