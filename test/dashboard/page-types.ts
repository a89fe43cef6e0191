// The wire shapes the browser tests read back from the service: the page's own, from the schemas.
export type { AuditReport, AuditedEvent, BasebandCallback, EventStatus, StageLatencyReport, TraceHistory } from '../../dashboard/src/api-types.js'
