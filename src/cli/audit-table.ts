import type { AuditedEvent, AuditSummary, ReportWindow } from '../../schemas/audit.js'
import { elapsed } from '../domain/audit/details.js'
import { STAGES } from '../vocabulary.js'
import { aligned } from './text-table.js'

const SUMMARY_COLUMNS = ['events', 'complete', 'in_progress', 'stuck', 'contradiction'] as const
const EVENT_COLUMNS = ['event_no', 'timestamp_utc', 'age', 'verdict', 'sites', 'findings']

/** The table's last line for a window that holds no baseband event. */
export const NOTHING_AUDITED = 'The window holds no baseband event: nothing was audited.'

/** What the table lists of a window: the events that need someone to look at them. */
export const isFlagged = (event: AuditedEvent) => event.verdict === 'stuck' || event.verdict === 'contradiction'

/** A flagged event's line: its findings are the stuck stages by site (late by the event's age), then each contradiction. */
export function flaggedRow(event: AuditedEvent, generatedAt: number): string[] {
  const stuckBySite = new Map<string | null, string[]>()
  const contradictions: string[] = []
  for (const found of event.findings) {
    if (found.rule !== 'stuck') contradictions.push(`${found.rule}: ${found.detail}`)
    else stuckBySite.set(found.site, [...(stuckBySite.get(found.site) ?? []), found.stage ?? ''])
  }
  const stuck = [...stuckBySite].map(([site, stages]) =>
    site === null ? `stuck: ${stages.join(', ')}` : `stuck at ${site}: ${stages.length === STAGES.length ? 'every stage' : stages.join(', ')}`
  )
  const age = elapsed(generatedAt - Date.parse(event.timestamp_utc))
  return [String(event.event_no), event.timestamp_utc, age, event.verdict, event.sites.join(','), [...stuck, ...contradictions].join(' | ')]
}

/** The audit for a person at a terminal: the window, the events by verdict, then a line per flagged event. */
export function auditTable(window: ReportWindow, generatedAt: string, summary: AuditSummary, flagged: readonly string[][]): string {
  const lines = [
    `Audit of ${window.start_time_utc} to ${window.end_time_utc} (at ${generatedAt})`,
    '',
    ...aligned([[...SUMMARY_COLUMNS], SUMMARY_COLUMNS.map((column) => String(summary[column]))], () => true),
    ''
  ]
  // An empty window is no all-clear: nothing was there to check (a pipeline that stopped, a wrong store).
  if (summary.events === 0) lines.push(NOTHING_AUDITED)
  else if (flagged.length === 0) lines.push('No event is stuck or contradictory.')
  else lines.push(...aligned([EVENT_COLUMNS, ...flagged], (column) => column === 0 || column === 2))
  return lines.join('\n') + '\n'
}
