// The wire shapes the browser tests read back from the service: the page's own, from the schemas.
export type { AuditReport, AuditedEvent, StageLatencyReport } from '../../dashboard/src/api-types.js'
