import type { AuditedEvent, AuditSummary, AuditVerdict } from '../../../schemas/audit.js'
import type { AuditSettings } from './audit-event.js'
import { auditOfReport, isFixed, type WindowEntry } from './kept-report.js'
import { auditedEventRecord } from './audited-event.js'
import { countInSummary, emptySummary } from './rules.js'

/** An audited event of a window: the record, or (a fixed audit) its JSON text already made. */
export type ListedEvent = AuditedEvent | string

export const listedJson = (serialize: (event: AuditedEvent) => string) => (event: ListedEvent) => (typeof event === 'string' ? event : serialize(event))

/** A listed event as its record (the command-line table reads them). */
export const listedRecord = (event: ListedEvent): AuditedEvent => (typeof event === 'string' ? (JSON.parse(event) as AuditedEvent) : event)

/** What narrows the events a report lists; its summary always counts the whole window. */
export interface AuditFilters {
  verdict?: AuditVerdict
  site?: string
}

/** A window audited a page at a time, never held whole; the summary counts every event, and is whole after the last page. */
export class WindowAudit {
  readonly summary: AuditSummary = emptySummary()

  constructor(
    readonly settings: AuditSettings,
    private readonly filters: AuditFilters = {}
  ) {}

  /** Audits each report at the audit's clock, so a deadline just passed counts; a fixed audit is passed on as its text. */
  page(entries: readonly WindowEntry[]): ListedEvent[] {
    const listed: ListedEvent[] = []
    const { verdict, site } = this.filters
    for (const entry of entries) {
      if (isFixed(entry)) {
        countInSummary(this.summary, entry)
        if ((verdict === undefined || entry.verdict === verdict) && (site === undefined || (JSON.parse(entry.json) as AuditedEvent).sites.includes(site))) {
          listed.push(entry.json)
        }
        continue
      }
      const audit = auditOfReport(entry, this.settings)
      countInSummary(this.summary, audit)
      if ((verdict === undefined || audit.verdict === verdict) && (site === undefined || audit.sites.includes(site))) {
        listed.push(auditedEventRecord({ event_no: entry.event_no, ...entry.event }, audit))
      }
    }
    return listed
  }

  async *pages(source: AsyncIterable<readonly WindowEntry[]>): AsyncGenerator<ListedEvent[]> {
    for await (const parts of source) yield this.page(parts)
  }
}
