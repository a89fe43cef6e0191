import { Type, type Static } from '@sinclair/typebox'
import { AUDIT_RULES, PIPELINE_STAGES, SEVERITIES, VERDICTS, type Sites } from '../src/vocabulary.js'
import { EventNoSchema, ref, StringEnum } from './common.js'
import { CallbackQuerySchema } from './trace.js'

export const AuditRuleSchema = StringEnum(AUDIT_RULES, {
  $id: 'AuditRule',
  description:
    'The check that failed: `stuck` (a stage incomplete past its deadline), `out-of-order` (a stage complete ' +
    'while an earlier one at the site is not), `completed-before-event` (a stage first recorded complete before the ' +
    'event itself), `registered-not-in-datatrail`, `datatrail-not-in-trace`, ' +
    '`replicated-with-missing-files`, `file-count-mismatch`, `heartbeat-error`, `classified-not-in-trace` (the event ' +
    'record holds a classification while the trace says the classification is incomplete).'
})
export type AuditRule = Static<typeof AuditRuleSchema>

export const AuditSeveritySchema = StringEnum(SEVERITIES, {
  $id: 'AuditSeverity',
  description: '`stuck` for the stuck rule (late); `contradiction` for every other rule (records disagree).'
})
export type AuditSeverity = Static<typeof AuditSeveritySchema>

export const AuditVerdictSchema = StringEnum(VERDICTS, {
  $id: 'AuditVerdict',
  description:
    '`contradiction` if any finding is one; else `stuck` if any finding is; else `complete` when every ' +
    'audited stage is complete; else `in_progress`.'
})
export type AuditVerdict = Static<typeof AuditVerdictSchema>

export const PipelineStageSchema = StringEnum(PIPELINE_STAGES, {
  $id: 'PipelineStage',
  description: 'A stage, in pipeline order: `tsar_classification` (no site), then the four stages of each site.'
})

const siteOrNull = (sites: Sites, description: string) => Type.Union([StringEnum(sites.names), Type.Null()], { description })

export const auditFindingSchema = (sites: Sites) =>
  Type.Object(
    {
      rule: ref(AuditRuleSchema),
      severity: ref(AuditSeveritySchema),
      site: siteOrNull(sites, 'The site concerned; null for `tsar_classification`.'),
      stage: Type.Union([ref(PipelineStageSchema), Type.Null()], { description: 'The stage concerned, or null.' }),
      detail: Type.String({ description: 'One plain sentence with the figures behind the finding.' })
    },
    { $id: 'AuditFinding', additionalProperties: false, description: 'One failed check of an event.' }
  )
export type AuditFinding = Static<ReturnType<typeof auditFindingSchema>>

export const auditedEventSchema = (sites: Sites) =>
  Type.Object(
    {
      event_no: EventNoSchema,
      timestamp_utc: Type.String({ format: 'date-time', description: 'Event time, ISO 8601 UTC.' }),
      snr: Type.Number({ description: 'Signal-to-noise ratio.' }),
      known_source_name: Type.String({ description: 'Known source, or the real-time pipeline category.' }),
      sites: Type.Array(StringEnum(sites.names), { description: 'Sites the event asked for baseband data from, in configured order: only these are audited.' }),
      verdict: ref(AuditVerdictSchema),
      findings: Type.Array(ref(auditFindingSchema(sites)), {
        description: 'Ordered by site (configured order, null first), stage (pipeline order, null first), then rule.'
      })
    },
    { $id: 'AuditedEvent', additionalProperties: false, description: 'One event held against its datatrail, heartbeats and the clock.' }
  )
export type AuditedEvent = Static<ReturnType<typeof auditedEventSchema>>

const count = (description: string) => Type.Integer({ minimum: 0, description })

export const AuditSummarySchema = Type.Object(
  {
    events: count('Events audited in the window.'),
    complete: count('Events whose verdict is `complete`.'),
    in_progress: count('Events whose verdict is `in_progress`.'),
    stuck: count('Events whose verdict is `stuck`.'),
    contradiction: count('Events whose verdict is `contradiction`.')
  },
  { $id: 'AuditSummary', additionalProperties: false, description: 'Counts over the whole window, whatever the filters.' }
)
export type AuditSummary = Static<typeof AuditSummarySchema>

export const ReportWindowSchema = Type.Object(
  {
    start_time_utc: Type.String({ format: 'date-time', description: 'Start of the window (inclusive), ISO 8601 UTC.' }),
    end_time_utc: Type.String({ format: 'date-time', description: 'End of the window (exclusive), ISO 8601 UTC.' })
  },
  { $id: 'ReportWindow', additionalProperties: false, description: 'The time window a report covers.' }
)
export type ReportWindow = Static<typeof ReportWindowSchema>

export const auditReportSchema = (sites: Sites) =>
  Type.Object(
    {
      window: ref(ReportWindowSchema),
      generated_at: Type.String({ format: 'date-time', description: 'When the audit ran, ISO 8601 UTC.' }),
      summary: ref(AuditSummarySchema),
      events: Type.Array(ref(auditedEventSchema(sites)), { description: 'Audited events (after the filters), ascending by event time, then event_no.' })
    },
    { $id: 'AuditReport', additionalProperties: false, description: 'The audit of a window.' }
  )

export const auditQuerySchema = (sites: Sites) =>
  Type.Object({
    ...CallbackQuerySchema.properties,
    verdict: Type.Optional(StringEnum(VERDICTS, { description: 'Only events with this verdict (the summary still counts all).' })),
    site: Type.Optional(StringEnum(sites.names, { description: 'Only events that asked for baseband data from this site.' }))
  })

export const becameStuckSchema = (sites: Sites) =>
  Type.Object(
    {
      site: siteOrNull(sites, 'The site; null for `tsar_classification`.'),
      stage: ref(PipelineStageSchema),
      deadline_utc: Type.String({ format: 'date-time', description: 'When the stage’s deadline passed: the event time plus the stage deadline, ISO 8601 UTC.' })
    },
    { $id: 'BecameStuck', additionalProperties: false, description: 'A stage whose deadline passed while it was incomplete.' }
  )

export const verdictChangeSchema = (sites: Sites) =>
  Type.Object(
    {
      event_no: EventNoSchema,
      from: Type.Union([ref(AuditVerdictSchema), Type.Null()], {
        description: 'The verdict before; null when the event was not in the audit (it had not asked for baseband data, or was not stored).'
      }),
      to: Type.Union([ref(AuditVerdictSchema), Type.Null()], {
        description: 'The verdict now; null when the event left the audit (it no longer asks for baseband data).'
      }),
      at: Type.String({ format: 'date-time', description: 'When the service saw the change: the write that made it, or the deadline check after a deadline passed, ISO 8601 UTC.' }),
      became_stuck: Type.Array(ref(becameStuckSchema(sites)), {
        description: 'Stages that turned stuck with this change, each with the moment its deadline passed; empty when none did.'
      }),
      audit: Type.Union([ref(auditedEventSchema(sites)), Type.Null()], {
        description: 'The audited event after the change, as `/audit/{event_no}` returns it; null when it left the audit.'
      }),
      left_sites: Type.Optional(
        Type.Array(StringEnum(sites.names), {
          minItems: 1,
          description:
            'Sites the event stopped asking for baseband data with this change (all it asked, when it left the audit): a stream filtered ' +
            'by one of them gets this change, so that a page filtered so can drop the event. Absent when it left none.'
        })
      )
    },
    {
      $id: 'VerdictChange',
      additionalProperties: false,
      description:
        'The `data` of an `event: verdict` message of the live stream (and each member of an `event: verdicts` message): an event’s ' +
        'audit verdict changed, one of its stages turned stuck as its deadline passed (with no write at all), or the sites it asks ' +
        'for baseband data changed.'
    }
  )
export type VerdictChange = Static<ReturnType<typeof verdictChangeSchema>>
export type BecameStuck = Static<ReturnType<typeof becameStuckSchema>>
