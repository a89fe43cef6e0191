import type { AuditedEvent, ReportWindow } from '../../schemas/audit.js'
import type { AuditSettings } from '../domain/audit/audit-event.js'
import { WindowAudit, type AuditFilters } from '../domain/audit/window-audit.js'
import { toIsoUtc, type TimeWindow } from '../domain/time-window.js'
import { jsonArray, jsonObject } from '../infrastructure/json-fragments.js'
import type { Store } from '../store/port.js'
import { windowParts } from './window-parts.js'

export const reportWindow = (window: TimeWindow): ReportWindow => ({
  start_time_utc: toIsoUtc(window.start),
  end_time_utc: toIsoUtc(window.end)
})

/**
 * The audit report of a window as JSON text, made as it is read (see json-fragments.ts): `window`,
 * `generated_at`, the `events` that pass the filters, then the `summary` of the whole window, which
 * is complete only once every event has streamed past. One page of the window is held at a time.
 */
export function auditReportJson(
  store: Store,
  window: TimeWindow,
  settings: AuditSettings,
  filters: AuditFilters,
  eventJson: (event: AuditedEvent) => string
): AsyncGenerator<string> {
  const audit = new WindowAudit(settings, filters)
  return jsonObject([
    ['window', JSON.stringify(reportWindow(window))],
    ['generated_at', JSON.stringify(toIsoUtc(settings.now))],
    ['events', jsonArray(audit.pages(windowParts(store, window)), eventJson)],
    ['summary', () => JSON.stringify(audit.summary)]
  ])
}
