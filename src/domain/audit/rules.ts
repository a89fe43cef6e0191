import type { AuditFinding, AuditRule, AuditSummary, AuditVerdict } from '../../../schemas/audit.js'
import {
  CLASSIFICATION_KEY,
  CLASSIFICATION_STAGE,
  PIPELINE_STAGES,
  STAGES,
  stageKey,
  type PipelineStage,
  type Sites,
  type StageStatus
} from '../../vocabulary.js'
import type { StageDeadlines } from '../stage-deadlines.js'
import type { EventAudit } from './audited-event.js'
import { details } from './details.js'
import { siteFacts, type KeptEvent, type KeptFacts, type KeptSite } from './kept-facts.js'

// The audit's rules over one event's facts (eventFacts): all but `stuck` need no clock (contradictionFindings).

export interface SiteFacts extends Readonly<KeptSite> {
  site: string
  /** Name of the site's datatrail member (`baseband`, `{site}_baseband`). */
  memberName: string
}

export interface EventFacts {
  /** The trace's `stages/tsar_classification`. */
  classification: StageStatus
  classifiedAs: string | null
  sites: SiteFacts[]
  /** When each key was first recorded complete, seconds since the epoch. */
  firstCompletions: ReadonlyMap<string, number>
}

/** The facts of the sites the event asked for, in configured order. */
export function eventFacts(facts: KeptFacts, event: Pick<KeptEvent, 'requested' | 'tsar_classification'>, configuredSites: Sites): EventFacts {
  return {
    classification: facts.classification,
    classifiedAs: event.tsar_classification,
    firstCompletions: new Map(Object.entries(facts.first_completions)),
    sites: event.requested.map((site) => ({ site, memberName: configuredSites.basebandKeyOf(site), ...siteFacts(facts, site) }))
  }
}

export const everyStageComplete = (facts: EventFacts) =>
  facts.classification === 'complete' && facts.sites.every((site) => STAGES.every((stage) => site.stages[stage] === 'complete'))

export function finding(rule: AuditRule, site: string | null, stage: AuditFinding['stage'], detail: string): AuditFinding {
  return { rule, severity: rule === 'stuck' ? 'stuck' : 'contradiction', site, stage, detail }
}

/** Findings by site (configured order, null first), then stage (pipeline order, null first), then rule id (plain string order, the same in every locale). */
export function findingOrder(sites: readonly string[]) {
  const siteRank = (site: string | null) => (site === null ? -1 : sites.indexOf(site))
  const stageRank = (stage: AuditFinding['stage']) => (stage === null ? -1 : PIPELINE_STAGES.indexOf(stage))
  return (a: AuditFinding, b: AuditFinding) =>
    siteRank(a.site) - siteRank(b.site) ||
    stageRank(a.stage) - stageRank(b.stage) ||
    (a.rule < b.rule ? -1 : a.rule > b.rule ? 1 : 0)
}

/** A contradiction outweighs lateness; with no finding, the event is complete or still in progress. */
export function verdictOf(findings: readonly AuditFinding[], everyStageComplete: boolean): AuditVerdict {
  if (findings.some((found) => found.severity === 'contradiction')) return 'contradiction'
  if (findings.some((found) => found.severity === 'stuck')) return 'stuck'
  return everyStageComplete ? 'complete' : 'in_progress'
}

export const emptySummary = (): AuditSummary => ({ events: 0, complete: 0, in_progress: 0, stuck: 0, contradiction: 0 })

/** Counts one audited event into a window's summary (which ignores the report's filters). */
export function countInSummary(summary: AuditSummary, audit: Pick<EventAudit, 'verdict'>): void {
  summary.events += 1
  summary[audit.verdict] += 1
}

export type PendingStage = [site: string | null, stage: PipelineStage]

/** The audited stages still incomplete, classification first, then each requested site's in pipeline order. */
export function pendingStages(facts: EventFacts): PendingStage[] {
  const pending: PendingStage[] = []
  if (facts.classification === 'incomplete') pending.push([null, CLASSIFICATION_STAGE])
  for (const site of facts.sites) for (const stage of STAGES) if (site.stages[stage] === 'incomplete') pending.push([site.site, stage])
  return pending
}

/** `stuck`: incomplete once its deadline has passed since the event (at it counts); the one place the rule is written. */
export function stuckFindings(pending: readonly PendingStage[], elapsedMs: number, deadlines: StageDeadlines): AuditFinding[] {
  return pending
    .filter(([, stage]) => elapsedMs >= deadlines[stage])
    .map(([site, stage]) => finding('stuck', site, stage, details.stuck(stage, site, elapsedMs, deadlines[stage])))
}

/** Every finding that does not depend on the clock: all but `stuck`, unordered. */
export const contradictionFindings = (audited: EventFacts, eventTime: number): AuditFinding[] => [
  ...classifiedNotInTraceFindings(audited),
  ...completedBeforeEventFindings(audited, eventTime),
  ...audited.sites.flatMap((site) => [...outOfOrderFindings(site), ...datatrailFindings(site), ...fileCountMismatch(site), ...heartbeatError(site)])
]

/** `classified-not-in-trace`: the record is classified but the trace's classification incomplete: its update was lost. */
function classifiedNotInTraceFindings(facts: EventFacts): AuditFinding[] {
  if (facts.classifiedAs === null || facts.classification !== 'incomplete') return []
  return [finding('classified-not-in-trace', null, CLASSIFICATION_STAGE, details.classifiedNotInTrace(facts.classifiedAs))]
}

/** `completed-before-event`: a stage recorded complete before the event, so a time or a clock is wrong (stage latency counts it apart). */
function completedBeforeEventFindings(facts: EventFacts, eventTimeMs: number): AuditFinding[] {
  const findings: AuditFinding[] = []
  const check = (stage: PipelineStage, site: string | null, key: string) => {
    const completedAt = facts.firstCompletions.get(key)
    if (completedAt !== undefined && completedAt * 1000 < eventTimeMs) {
      findings.push(finding('completed-before-event', site, stage, details.completedBeforeEvent(stage, site, eventTimeMs - completedAt * 1000)))
    }
  }
  check(CLASSIFICATION_STAGE, null, CLASSIFICATION_KEY)
  for (const site of facts.sites) {
    for (const stage of STAGES) check(stage, site.site, stageKey(stage, site.site))
  }
  return findings
}

/** `out-of-order`: a stage complete while an earlier stage at its site is not; one per such later stage. */
function outOfOrderFindings(facts: SiteFacts): AuditFinding[] {
  return STAGES.flatMap((stage, index) => {
    if (facts.stages[stage] !== 'complete') return []
    const earlier = STAGES.slice(0, index).filter((before) => facts.stages[before] === 'incomplete')
    if (earlier.length === 0) return []
    return [finding('out-of-order', facts.site, stage, details.outOfOrder(stage, facts.site, earlier))]
  })
}

/** The trace against the site's datatrail member: registration and replication must agree with it. */
function datatrailFindings({ site, memberName, member, stages }: SiteFacts): AuditFinding[] {
  const findings: AuditFinding[] = []
  if (stages.data_registration === 'complete' && !member.registered) {
    findings.push(finding('registered-not-in-datatrail', site, 'data_registration', details.registeredNotInDatatrail(site, memberName)))
  }
  if (member.registered && stages.data_registration === 'incomplete') {
    findings.push(finding('datatrail-not-in-trace', site, 'data_registration', details.datatrailNotInTrace(site, memberName)))
  }
  if (stages.data_replication_to_minoc === 'complete' && member.missing_files > 0) {
    const detail = details.replicatedWithMissingFiles(site, memberName, member.missing_files)
    findings.push(finding('replicated-with-missing-files', site, 'data_replication_to_minoc', detail))
  }
  return findings
}

/** `file-count-mismatch`: the last finished heartbeat counts other files than the registered member (unfinished ones prove nothing). */
function fileCountMismatch({ site, memberName, member, last_finished: last }: SiteFacts): AuditFinding[] {
  if (!member.registered || last === null || last.total_data_files === member.num_files) return []
  const detail = details.fileCountMismatch(site, last.heartbeat_id, last.total_data_files, memberName, member.num_files)
  return [finding('file-count-mismatch', site, 'data_registration', detail)]
}

/** `heartbeat-error`: conversion is complete, yet a heartbeat reported an error; names the newest such. */
function heartbeatError({ site, stages, last_error: last }: SiteFacts): AuditFinding[] {
  if (stages.baseband_conversion !== 'complete' || last === null) return []
  return [finding('heartbeat-error', site, 'baseband_conversion', details.heartbeatError(site, last.heartbeat_id, last.error))]
}
