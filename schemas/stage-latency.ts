import { Type, type Static } from '@sinclair/typebox'
import type { Sites } from '../src/vocabulary.js'
import { PipelineStageSchema, ReportWindowSchema } from './audit.js'
import { ref, StringEnum } from './common.js'

const seconds = (description: string) => Type.Union([Type.Number(), Type.Null()], { description: `${description}; null when no latency is known.` })

export const stageLatencyRowSchema = (sites: Sites) =>
  Type.Object(
    {
      stage: ref(PipelineStageSchema),
      site: Type.Union([StringEnum(sites.names), Type.Null()], { description: 'The site; null for `tsar_classification`.' }),
      complete: Type.Integer({ minimum: 0, description: 'Keys that are complete now (`not_required` counts as complete).' }),
      incomplete: Type.Integer({ minimum: 0, description: 'Keys that are incomplete now, missing ones included.' }),
      completed_before_event: Type.Integer({
        minimum: 0,
        description:
          'Keys complete now whose first recorded change to complete came before the event (the audit finding ' +
          '`completed-before-event`): counted in `complete`, left out of the latencies.'
      }),
      p50_s: seconds('Median latency in seconds (nearest rank)'),
      p95_s: seconds('95th percentile latency in seconds (nearest rank)'),
      max_s: seconds('Longest latency in seconds')
    },
    {
      $id: 'StageLatencyRow',
      additionalProperties: false,
      description:
        'One stage at one site over the events that asked for that site. A latency is the time from the event ' +
        'to the first recorded transition of the key to `complete`, never negative; keys completed without one are counted, ' +
        'not timed, and keys recorded complete before the event are counted in `completed_before_event`, not timed.'
    }
  )
export type StageLatencyRow = Static<ReturnType<typeof stageLatencyRowSchema>>

export const stageLatencyReportSchema = (sites: Sites) =>
  Type.Object(
    {
      window: ref(ReportWindowSchema),
      stages: Type.Array(ref(stageLatencyRowSchema(sites)), {
        description:
          '`tsar_classification` (site null) always, then each site stage at every site that at least one event of ' +
          'the window asked for; by stage (pipeline order), then site (configured order).'
      })
    },
    { $id: 'StageLatencyReport', additionalProperties: false, description: 'How long each stage takes, over a window.' }
  )
export type StageLatencyReport = Static<ReturnType<typeof stageLatencyReportSchema>>
