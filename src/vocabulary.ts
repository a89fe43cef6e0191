// The words the whole service shares: a leaf module (it imports nothing), so every layer takes its words from here.

/** The four per-site stages of a baseband callback, in pipeline order. */
export const STAGES = ['baseband_callback_request', 'baseband_conversion', 'data_registration', 'data_replication_to_minoc'] as const
export type Stage = (typeof STAGES)[number]

export const CLASSIFICATION_STAGE = 'tsar_classification'
export const CLASSIFICATION_KEY = `stages/${CLASSIFICATION_STAGE}`

/** Every stage in pipeline order: the classification (no site) comes before the four site stages. */
export const PIPELINE_STAGES = [CLASSIFICATION_STAGE, ...STAGES] as const
export type PipelineStage = (typeof PIPELINE_STAGES)[number]

export const STATUSES = ['complete', 'incomplete'] as const
export type StageStatus = (typeof STATUSES)[number]

/** The Python client's `Status` values: `not_required` is stored as it is (history shows it) and reads `complete`. */
export const WRITTEN_STATUSES = [...STATUSES, 'not_required'] as const
export type WrittenStatus = (typeof WRITTEN_STATUSES)[number]

export const stageKey = (stage: Stage, site: string) => `stages/${stage}/sites/${site}`

/** The trace key a stage names at a site; the classification stage has no site. */
export const traceKey = (stage: PipelineStage, site: string) =>
  stage === CLASSIFICATION_STAGE ? CLASSIFICATION_KEY : stageKey(stage, site)

export const AUDIT_RULES = [
  'stuck',
  'out-of-order',
  'completed-before-event',
  'registered-not-in-datatrail',
  'datatrail-not-in-trace',
  'replicated-with-missing-files',
  'file-count-mismatch',
  'heartbeat-error',
  'classified-not-in-trace'
] as const
export type AuditRule = (typeof AUDIT_RULES)[number]

/** `stuck`: late but possibly fine; `contradiction`: two records of the event cannot both be right. */
export const SEVERITIES = ['stuck', 'contradiction'] as const

export const VERDICTS = ['complete', 'in_progress', 'stuck', 'contradiction'] as const

/** The names made from the configured sites: the first site's baseband data is plain `baseband`, the others' `{site}_baseband`. */
export interface Sites {
  readonly names: readonly string[]
  /** Per site, in site order: the actions key and datatrail member of its baseband data. */
  readonly basebandKeys: readonly string[]
  /** The members of `actions.want` and `actions.got` and of an event's datatrail. */
  readonly dataProducts: readonly string[]
  /** Every status key of a trace, in output order. */
  readonly traceKeys: readonly string[]
  includes(site: string): boolean
  /** The actions key and datatrail member of a configured site's baseband data. */
  basebandKeyOf(site: string): string
}

export function siteModel(names: readonly string[]): Sites {
  const siteNames = Object.freeze([...names])
  const basebandKeys = Object.freeze(siteNames.map((site, index) => (index === 0 ? 'baseband' : `${site}_baseband`)))
  const keyBySite = new Map(siteNames.map((site, index) => [site, basebandKeys[index]!]))
  return Object.freeze({
    names: siteNames,
    basebandKeys,
    dataProducts: Object.freeze(['intensity', ...basebandKeys]),
    traceKeys: Object.freeze([CLASSIFICATION_KEY, ...STAGES.flatMap((stage) => siteNames.map((site) => stageKey(stage, site)))]),
    includes: (site: string) => keyBySite.has(site),
    basebandKeyOf: (site: string) => {
      const key = keyBySite.get(site)
      if (key === undefined) throw new RangeError(`${site} is not a configured site`)
      return key
    }
  })
}
