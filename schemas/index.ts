import type { TSchema } from '@sinclair/typebox'
import type { Sites } from '../src/vocabulary.js'
import { AccessTokenResponseSchema, CredentialsSchema, RefreshRequestSchema, TokenInvalidSchema, TokenPairSchema, TokenValidSchema } from './auth.js'
import {
  auditedEventSchema,
  auditFindingSchema,
  auditReportSchema,
  AuditRuleSchema,
  becameStuckSchema,
  AuditSeveritySchema,
  AuditSummarySchema,
  AuditVerdictSchema,
  PipelineStageSchema,
  ReportWindowSchema,
  verdictChangeSchema
} from './audit.js'
import { ErrorEnvelopeSchema, ExceptionSchema, StatusTrueSchema } from './common.js'
import { DatatrailMemberSchema, datatrailSchema, LargerDatasetSchema } from './datatrail.js'
import { eventStatusSchema } from './event-status.js'
import {
  actionFlagsSchema,
  actionsSchema,
  EventBatchRequestSchema,
  eventInputSchema,
  eventPageSchema,
  eventSchema,
  eventsByNumberSchema,
  UpsertResultSchema
} from './events.js'
import { HeartbeatReceivedSchema, heartbeatInputSchema, heartbeatSchema, HeartbeatSentSchema } from './heartbeats.js'
import { StreamedTransitionSchema, TraceHistorySchema, TransitionSchema } from './history.js'
import { HealthSchema, VersionSchema } from './service.js'
import { stageLatencyReportSchema, stageLatencyRowSchema } from './stage-latency.js'
import { basebandCallbackSchema, createTraceRequestSchema, StageStatusSchema, traceSchema, updateTraceRequestSchema } from './trace.js'

/** Every schema with an `$id`, registered once with `fastify.addSchema` and named in openapi.yaml in this order. */
export function sharedSchemas(sites: Sites): TSchema[] {
  return [
    [ExceptionSchema, ErrorEnvelopeSchema, StatusTrueSchema],
    [CredentialsSchema, TokenPairSchema, AccessTokenResponseSchema, RefreshRequestSchema, TokenValidSchema, TokenInvalidSchema],
    [VersionSchema, HealthSchema],
    [StageStatusSchema, traceSchema(sites), basebandCallbackSchema(sites), createTraceRequestSchema(sites), updateTraceRequestSchema(sites)],
    [actionFlagsSchema(sites), actionsSchema(sites), eventSchema(sites), eventInputSchema(sites), eventPageSchema(sites)],
    [EventBatchRequestSchema, eventsByNumberSchema(sites), UpsertResultSchema],
    [LargerDatasetSchema, DatatrailMemberSchema, datatrailSchema(sites)],
    [HeartbeatSentSchema, HeartbeatReceivedSchema, heartbeatSchema(sites), heartbeatInputSchema(sites), eventStatusSchema(sites)],
    [AuditRuleSchema, AuditSeveritySchema, AuditVerdictSchema, PipelineStageSchema, auditFindingSchema(sites), auditedEventSchema(sites)],
    [AuditSummarySchema, ReportWindowSchema, auditReportSchema(sites), becameStuckSchema(sites), verdictChangeSchema(sites)],
    [TransitionSchema, StreamedTransitionSchema, TraceHistorySchema, stageLatencyRowSchema(sites), stageLatencyReportSchema(sites)]
  ].flat()
}
