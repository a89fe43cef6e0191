import type { AuditedEvent, AuditSummary, AuditVerdict } from '../../../schemas/audit.js'
import type { AuditSettings } from './audit-event.js'
import { auditOfReport, type KeptReport } from './kept-report.js'
import { auditedEventRecord } from './audited-event.js'
import { countInSummary, emptySummary } from './summary.js'

/** What narrows the events a report lists; its summary always counts the whole window. */
export interface AuditFilters {
  verdict?: AuditVerdict
  /** Only events that asked for baseband data from this site. */
  site?: string
}

/**
 * A window audited in one pass, a page at a time, so that a long window is never held whole: each
 * page gives its audited events that pass the filters, and every event of the page is counted into
 * the summary. The summary is whole once the last page is audited.
 */
export class WindowAudit {
  readonly summary: AuditSummary = emptySummary()

  constructor(
    readonly settings: AuditSettings,
    private readonly filters: AuditFilters = {}
  ) {}

  /** Each event is audited from its kept report at the audit's clock, so a deadline that passed a moment ago already counts. */
  page(reports: readonly KeptReport[]): AuditedEvent[] {
    const listed: AuditedEvent[] = []
    for (const report of reports) {
      const audit = auditOfReport(report, this.settings)
      countInSummary(this.summary, audit)
      const { verdict, site } = this.filters
      if ((verdict === undefined || audit.verdict === verdict) && (site === undefined || audit.sites.includes(site))) {
        listed.push(auditedEventRecord({ event_no: report.event_no, ...report.event }, audit))
      }
    }
    return listed
  }

  async *pages(source: AsyncIterable<readonly KeptReport[]>): AsyncGenerator<AuditedEvent[]> {
    for await (const parts of source) yield this.page(parts)
  }
}
