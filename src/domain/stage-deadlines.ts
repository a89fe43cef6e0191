import { PIPELINE_STAGES, type PipelineStage } from '../vocabulary.js'
import { parseDuration } from './duration.js'

/** How long after the event each stage may stay incomplete before the audit calls it stuck, in ms. */
export type StageDeadlines = Readonly<Record<PipelineStage, number>>

const DEFAULTS: Readonly<Record<PipelineStage, string>> = {
  tsar_classification: '1h',
  baseband_callback_request: '15m',
  baseband_conversion: '6h',
  data_registration: '12h',
  data_replication_to_minoc: '48h'
}

export const DEFAULT_STAGE_DEADLINES = PIPELINE_STAGES.map((stage) => `${stage}=${DEFAULTS[stage]}`).join(',')

const isStage = (name: string): name is PipelineStage => (PIPELINE_STAGES as readonly string[]).includes(name)

/** `stage=duration` pairs, comma-separated; stages not named keep their default. Throws an Error for the configuration to name. */
export function parseStageDeadlines(text: string): StageDeadlines {
  const deadlines = Object.fromEntries(PIPELINE_STAGES.map((stage) => [stage, durationMs(stage, DEFAULTS[stage])]))
  const named = new Set<string>()
  for (const entry of text.split(',')) {
    if (entry.trim() === '') throw new Error('has an empty entry (a stray comma?)')
    const [name = '', duration, ...rest] = entry.split('=').map((part) => part.trim())
    if (duration === undefined || rest.length > 0) {
      throw new Error(`has ${JSON.stringify(entry)} where a stage=duration pair (like baseband_conversion=6h) belongs`)
    }
    if (!isStage(name)) {
      throw new Error(`names an unknown stage ${JSON.stringify(name)} (stages: ${PIPELINE_STAGES.join(', ')})`)
    }
    if (named.has(name)) throw new Error(`names ${name} twice`)
    named.add(name)
    deadlines[name] = durationMs(name, duration)
  }
  return deadlines as Record<PipelineStage, number>
}

function durationMs(stage: PipelineStage, text: string): number {
  try {
    return parseDuration(text)
  } catch (error) {
    throw new Error(`gives ${stage} ${JSON.stringify(text)}: ${(error as Error).message}`)
  }
}

/** The text form of decoded deadlines (in seconds), which parses back to the same values. */
export const formatStageDeadlines = (deadlines: StageDeadlines) =>
  PIPELINE_STAGES.map((stage) => `${stage}=${deadlines[stage] / 1000}s`).join(',')
