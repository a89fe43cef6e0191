import type { AuditedEvent, AuditReport, AuditSummary, BasebandCallback, StageStatus, StreamedTransition, Trace, VerdictChange } from './api-types.js'
import { cellOf, type Cell } from './cells.js'
import { CLASSIFICATION_KEY, CLASSIFICATION_STAGE, STAGES, stageKey, type Stage } from '../../src/vocabulary.js'
import type { CellState } from './labels.js'

export { STAGES, type Stage }

/** One event of the grid: its audit record joined with its trace (null when none is stored). */
export interface EventRow {
  audit: AuditedEvent
  trace: Trace | null
  /** A transition changed the trace since the audit record was read; a new one is on its way. */
  stale: boolean
}

/** The audit of a window joined with the window's baseband callbacks, by event_no. */
export function joinWindow(report: AuditReport, callbacks: readonly BasebandCallback[]): EventRow[] {
  const traces = new Map(callbacks.map((callback) => [callback.event_no, (callback.trace ?? null) as Trace | null]))
  return report.events.map((audit) => ({ audit, trace: traces.get(audit.event_no) ?? null, stale: false }))
}

const valueOf = (trace: Trace | null, key: string): StageStatus | undefined =>
  (trace as Record<string, StageStatus> | null)?.[key]

export const classificationCell = (row: EventRow): Cell =>
  cellOf(row.audit.findings, null, CLASSIFICATION_STAGE, valueOf(row.trace, CLASSIFICATION_KEY))

export const stageCell = (row: EventRow, site: string, stage: Stage): Cell =>
  cellOf(row.audit.findings, site, stage, valueOf(row.trace, stageKey(stage, site)))

const KEY = /^stages\/(?:tsar_classification|([a-z_]+)\/sites\/([a-z][a-z0-9_]*))$/

/** The site and stage a trace key names, or undefined for a key that is no stage. */
export function parseKey(key: string): { stage: Stage | typeof CLASSIFICATION_STAGE; site: string | null } | undefined {
  const match = KEY.exec(key)
  if (match === null) return undefined
  const [, stage, site] = match
  if (stage === undefined) return { stage: CLASSIFICATION_STAGE, site: null }
  return (STAGES as readonly string[]).includes(stage) ? { stage: stage as Stage, site: site! } : undefined
}

/**
 * A transition from the live stream, applied at once: the trace takes the new value, and a stuck
 * finding on a key that is now complete is dropped (stuck means incomplete past the deadline).
 * Everything else waits for the event's audit record, read again. Undefined when the event is not
 * in the grid.
 */
export function applyTransition(rows: readonly EventRow[], transition: StreamedTransition): EventRow[] | undefined {
  const index = rows.findIndex((row) => row.audit.event_no === transition.event_no)
  const place = parseKey(transition.key)
  if (index === -1 || place === undefined) return undefined
  const row = rows[index]!
  const trace = { ...(row.trace ?? { event_no: transition.event_no, update_timestamp: 0 }), [transition.key]: transition.to } as Trace
  trace.update_timestamp = Math.max(trace.update_timestamp, transition.at)
  const findings =
    transition.to === 'complete'
      ? row.audit.findings.filter((f) => !(f.rule === 'stuck' && f.site === place.site && f.stage === place.stage))
      : row.audit.findings
  const next = rows.slice()
  next[index] = { audit: { ...row.audit, findings }, trace, stale: true }
  return next
}

/**
 * A window read while transitions arrived: its answers may predate some of them, so they are
 * applied again (a value set twice is the same value).
 */
export function reapply(rows: EventRow[], transitions: readonly StreamedTransition[]): EventRow[] {
  return transitions.reduce((current, transition) => applyTransition(current, transition) ?? current, rows)
}

/** The event's new audit record in place of the old one, and the window's summary moved with it. */
export function replaceAudit(
  rows: readonly EventRow[],
  summary: AuditSummary,
  audit: AuditedEvent
): { rows: EventRow[]; summary: AuditSummary } {
  const index = rows.findIndex((row) => row.audit.event_no === audit.event_no)
  if (index === -1) return { rows: rows.slice(), summary }
  const before = rows[index]!.audit.verdict
  const next = rows.slice()
  next[index] = { ...rows[index]!, audit, stale: false }
  const moved = { ...summary }
  moved[before] -= 1
  moved[audit.verdict] += 1
  return { rows: next, summary: moved }
}

/**
 * Verdict changes from the live stream (a burst of thousands, as one deadline passes for an
 * outage's backlog), applied at once: each event's audit record replaced by its latest, and the
 * summary moved, with one copy of the rows however many changes (none when no row changed).
 * Only a read of the window settles the rest: `left`, an event of the grid left the audit;
 * `missing`, a change is of an event the grid does not have (new in a window that ends now, or
 * outside the window).
 */
export function applyVerdicts(
  rows: EventRow[],
  summary: AuditSummary,
  changes: readonly VerdictChange[]
): { rows: EventRow[]; summary: AuditSummary; left: boolean; missing: boolean } {
  const index = new Map(rows.map((row, at) => [row.audit.event_no, at]))
  let next: EventRow[] | undefined
  const moved = { ...summary }
  let left = false
  let missing = false
  for (const change of changes) {
    const at = index.get(change.event_no)
    if (at === undefined) missing = true
    else if (change.audit === null) left = true
    else {
      next ??= rows.slice()
      moved[next[at]!.audit.verdict] -= 1
      moved[change.audit.verdict] += 1
      next[at] = { ...next[at]!, audit: change.audit, stale: false }
    }
  }
  return next === undefined ? { rows, summary, left, missing } : { rows: next, summary: moved, left, missing }
}

/**
 * The sites of the window in configured order. Each event lists its sites in that order, so merging
 * the lists keeps it without the page knowing the service's configuration.
 */
export function sitesOf(rows: readonly EventRow[]): string[] {
  const order: string[] = []
  for (const { audit } of rows) {
    audit.sites.forEach((site, index) => {
      if (order.includes(site)) return
      // Before the first later site of this event already placed; at the end when there is none.
      const next = audit.sites.slice(index + 1).find((later) => order.includes(later))
      order.splice(next === undefined ? order.length : order.indexOf(next), 0, site)
    })
  }
  return order
}

export interface Filters {
  verdict: CellState | 'all'
  /** A configured site, or `all`. */
  site: string
}

/** The events shown, and the sites shown for each: only the chosen site when one is chosen. */
export function visibleRows(rows: readonly EventRow[], filters: Filters): { row: EventRow; sites: string[] }[] {
  return rows
    .filter((row) => filters.verdict === 'all' || row.audit.verdict === filters.verdict)
    .filter((row) => filters.site === 'all' || row.audit.sites.includes(filters.site))
    .map((row) => ({ row, sites: filters.site === 'all' ? row.audit.sites : [filters.site] }))
}
