import type { AuditFinding } from '../../schemas/audit.js'
import type { Actions } from '../../schemas/events.js'
import { loadConfig } from '../../src/config.js'
import { auditEvent, type AuditSettings, type EventAudit } from '../../src/domain/audit/audit-event.js'
import type { AuditedParts } from '../../src/domain/audit/audit-event.js'
import { fixtureHeartbeat } from '../../src/domain/audit/signature-fixtures.js'
import type { DatatrailRecord, HeartbeatRecord, TraceRecord } from '../../src/domain/records.js'
import { siteModel, STAGES, stageKey } from '../../src/vocabulary.js'

export const SITES = siteModel(['chime', 'kko', 'gbo', 'hco'])
export const DEADLINES = loadConfig({}).STAGE_DEADLINES
export const T0 = Date.parse('2026-03-01T12:00:00Z')
export const MINUTE = 60_000
export const HOUR = 60 * MINUTE

/** A trace with the given keys (short names: `tsar`, or `{stage}@{site}`); nothing else stored. */
export function trace(values: Record<string, string>): TraceRecord {
  const stored: TraceRecord = { event_no: 1, update_timestamp: T0 / 1000 }
  for (const [name, value] of Object.entries(values)) {
    const [stage, site] = name.split('@') as [string, string | undefined]
    stored[stage === 'tsar' ? 'stages/tsar_classification' : `stages/${stage}/sites/${site}`] = value
  }
  return stored
}

/** Every stage of the given sites, and the classification, `complete`. */
export function completeTrace(...sites: string[]): TraceRecord {
  const stored = trace({ tsar: 'complete' })
  for (const site of sites) for (const stage of STAGES) stored[stageKey(stage, site)] = 'complete'
  return stored
}

export const member = (name: string, value: Record<string, unknown>): Pick<DatatrailRecord, 'member' | 'value'> => ({
  member: name,
  value
})

export const registered = (name: string, extra: Record<string, unknown> = {}) =>
  member(name, { registered: true, should_be_at_minoc: true, larger_dataset: {}, data_path: '/data', num_files: 10, missing_files: [], ...extra })

/** A heartbeat of event 1 (see fixtureHeartbeat). */
export const heartbeat = (id: number, site: string, options: { files?: number; finished?: boolean; error?: string | null } = {}): Pick<HeartbeatRecord, 'heartbeat'> =>
  fixtureHeartbeat(1, id, site, options)

export interface Case {
  want?: Actions['want']
  /** The event record's classification; none unless given. */
  classification?: string | null
  trace?: TraceRecord | null
  datatrail?: AuditedParts['datatrail']
  heartbeats?: AuditedParts['heartbeats']
  transitions?: AuditedParts['transitions']
  /** Time since the event, ms; 10 minutes unless given (before any default deadline). */
  after?: number
  settings?: Partial<AuditSettings>
}

export function audit(c: Case): EventAudit {
  const parts: AuditedParts = {
    event: { timestamp: T0, actions: { want: c.want ?? { baseband: true }, got: {} }, tsar_classification: c.classification ?? null },
    trace: c.trace === undefined ? null : c.trace,
    datatrail: c.datatrail ?? [],
    heartbeats: c.heartbeats ?? [],
    transitions: c.transitions ?? []
  }
  return auditEvent(parts, { sites: SITES, deadlines: DEADLINES, now: T0 + (c.after ?? 10 * MINUTE), ...c.settings })
}

/** The findings of one rule, as `stage@site` (`stage` alone without a site). */
export function found(result: EventAudit, rule: AuditFinding['rule']): string[] {
  return result.findings
    .filter((finding) => finding.rule === rule)
    .map((finding) => (finding.site === null ? `${finding.stage}` : `${finding.stage}@${finding.site}`))
}
