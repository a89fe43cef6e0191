import type { AuditFinding } from '../../../schemas/audit.js'
import { classifiedNotInTraceFindings } from './classified-not-in-trace.js'
import { completedBeforeEventFindings } from './completed-before-event.js'
import { datatrailFindings } from './datatrail-rules.js'
import { heartbeatFindings } from './heartbeat-rules.js'
import { outOfOrderFindings } from './out-of-order.js'
import type { EventFacts, SiteFacts } from './site-facts.js'

const siteFindings = (site: SiteFacts) => [...outOfOrderFindings(site), ...datatrailFindings(site), ...heartbeatFindings(site)]

/** Every finding that does not depend on the clock: all but `stuck`, unordered. */
export const contradictionFindings = (audited: EventFacts, eventTime: number): AuditFinding[] => [
  ...classifiedNotInTraceFindings(audited),
  ...completedBeforeEventFindings(audited, eventTime),
  ...audited.sites.flatMap(siteFindings)
]
