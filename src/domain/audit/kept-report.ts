import type { AuditFinding, AuditVerdict } from '../../../schemas/audit.js'
import type { Sites } from '../../vocabulary.js'
import type { EventPosition } from '../records.js'
import { auditedEventRecord, type AuditSettings, type EventAudit } from './audited-event.js'
import type { KeptEvent, KeptFacts } from './kept-facts.js'
import { contradictionFindings, eventFacts, everyStageComplete, findingOrder, pendingStages, stuckFindings, verdictOf, type PendingStage } from './rules.js'

/** An event's audit with the clock left out (what a window read parses): its contradictions, and the stages `stuck` may name. */
export interface KeptReport {
  event_no: number
  event: Pick<KeptEvent, 'timestamp' | 'snr' | 'known_source_name'>
  sites: string[]
  /** Every finding but `stuck`, in the audit's order. */
  contradictions: AuditFinding[]
  pending: PendingStage[]
  complete: boolean
}

export type ReportBody = Pick<KeptReport, 'sites' | 'contradictions' | 'pending' | 'complete'>

/** What the rules find in the facts of the sites `event` asked for, but `stuck`, which waits for a clock. */
export function reportBody(facts: KeptFacts, event: Pick<KeptEvent, 'timestamp' | 'requested' | 'tsar_classification'>, sites: Sites): ReportBody {
  const audited = eventFacts(facts, event, sites)
  return {
    sites: event.requested,
    contradictions: contradictionFindings(audited, event.timestamp).sort(findingOrder(sites.names)),
    pending: pendingStages(audited),
    complete: everyStageComplete(audited)
  }
}

/** The report of kept facts; null for an event that is not in the audit (not written, or asking for no baseband data). */
export function reportOf(facts: KeptFacts, sites: Sites): KeptReport | null {
  const event = facts.event
  if (event === null || !event.listed) return null
  return {
    event_no: facts.event_no,
    event: { timestamp: event.timestamp, snr: event.snr, known_source_name: event.known_source_name },
    ...reportBody(facts, event, sites)
  }
}

/** The audit of a report at `settings.now`: the one place an audit is assembled, for every read and the reference made from records. */
export function auditOfReport(report: ReportBody & { event: Pick<KeptEvent, 'timestamp'> }, settings: AuditSettings): EventAudit {
  const stuck = stuckFindings(report.pending, settings.now - report.event.timestamp, settings.deadlines)
  const findings = stuck.length === 0 ? report.contradictions : [...stuck, ...report.contradictions].sort(findingOrder(settings.sites.names))
  return { sites: report.sites, verdict: verdictOf(findings, report.complete), findings }
}

/** The audit of an event no clock can change (nothing pending), kept as the text a window read passes on unparsed. */
export interface FixedAudit {
  event_no: number
  timestamp: number
  verdict: AuditVerdict
  /** The AuditedEvent, as JSON text. */
  json: string
}

export type WindowEntry = KeptReport | FixedAudit

export const isFixed = (entry: WindowEntry): entry is FixedAudit => 'json' in entry

/** Where an entry stands in its window's order (event time, then number). */
export const entryPosition = (entry: WindowEntry): EventPosition => ({ timestamp: isFixed(entry) ? entry.timestamp : entry.event.timestamp, event_no: entry.event_no })

/** The fixed audit of a report and its audit at any clock; null when a stage is pending, so a clock could still change it. */
export function fixedAuditOf(report: KeptReport, audit: EventAudit): FixedAudit | null {
  if (report.pending.length > 0) return null
  const record = auditedEventRecord({ event_no: report.event_no, ...report.event }, audit)
  return { event_no: report.event_no, timestamp: report.event.timestamp, verdict: audit.verdict, json: JSON.stringify(record) }
}
