import type { AuditedEvent, ReportWindow } from '../../schemas/audit.js'
import type { WindowAudit } from '../domain/audit/window-audit.js'
import { toIsoUtc, type TimeWindow } from '../domain/time-window.js'
import { jsonArray, jsonObject } from './json-fragments.js'
import type { WindowEntry } from '../domain/audit/kept-report.js'
import { listedJson } from '../domain/audit/window-audit.js'

export const reportWindow = (window: TimeWindow): ReportWindow => ({
  start_time_utc: toIsoUtc(window.start),
  end_time_utc: toIsoUtc(window.end)
})

/** A window's audit report as JSON made as it is read; the `summary` comes last, complete once every event has streamed past. */
export function auditReportJson(
  source: AsyncIterable<readonly WindowEntry[]>,
  window: TimeWindow,
  audit: WindowAudit,
  eventJson: (event: AuditedEvent) => string
): AsyncGenerator<string> {
  return jsonObject([
    ['window', JSON.stringify(reportWindow(window))],
    ['generated_at', JSON.stringify(toIsoUtc(audit.settings.now))],
    ['events', jsonArray(audit.pages(source), listedJson(eventJson))],
    ['summary', () => JSON.stringify(audit.summary)]
  ])
}
