/**
 * The wire shapes the page reads, taken from the service's own TypeBox schemas: never written
 * again by hand, so a change of a schema breaks the page's type check instead of the page.
 */
import type { Static } from '@sinclair/typebox'
import type { auditReportSchema, AuditedEvent, AuditFinding, AuditSummary, AuditVerdict, VerdictChange } from '../../schemas/audit.js'
import type { AccessTokenResponseSchema, TokenPair } from '../../schemas/auth.js'
import type { ErrorEnvelope } from '../../schemas/common.js'
import type { eventStatusSchema } from '../../schemas/event-status.js'
import type { StreamedTransition, TraceHistory, Transition } from '../../schemas/history.js'
import type { stageLatencyReportSchema, StageLatencyRow } from '../../schemas/stage-latency.js'
import type { basebandCallbackSchema, StageStatusSchema } from '../../schemas/trace.js'

export type { AuditedEvent, AuditFinding, AuditSummary, AuditVerdict, ErrorEnvelope, StageLatencyRow, TokenPair, VerdictChange }
export type { StreamedTransition, TraceHistory, Transition }
export type AccessTokenResponse = Static<typeof AccessTokenResponseSchema>
export type AuditReport = Static<ReturnType<typeof auditReportSchema>>
export type BasebandCallback = Static<ReturnType<typeof basebandCallbackSchema>>
export type EventStatus = Static<ReturnType<typeof eventStatusSchema>>
export type StageLatencyReport = Static<ReturnType<typeof stageLatencyReportSchema>>
export type StageStatus = Static<typeof StageStatusSchema>
/** The trace: its key set follows the configured sites, so the schema's static type cannot list the keys. */
export type Trace = NonNullable<BasebandCallback['trace']> & { [key: `stages/${string}`]: StageStatus }
