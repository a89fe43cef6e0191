import type { AuditedEvent } from '../../../schemas/audit.js'
import type { Sites } from '../../vocabulary.js'
import type { StageDeadlines } from '../stage-deadlines.js'

/** What an audit is made with besides an event's facts: the sites, the deadlines and the clock. */
export interface AuditSettings {
  /** The configured sites; the first is the primary one. */
  sites: Sites
  deadlines: StageDeadlines
  /** The clock the deadlines are held against, ms since the epoch. */
  now: number
}

/** An event's audit: the sites audited, the verdict and the findings behind it. */
export type EventAudit = Pick<AuditedEvent, 'sites' | 'verdict' | 'findings'>
