import type { DatatrailMember } from '../../../schemas/datatrail.js'
import type { Heartbeat } from '../../../schemas/heartbeats.js'
import { CLASSIFICATION_KEY, STAGES, stageKey, type Sites, type Stage, type StageStatus } from '../../vocabulary.js'
import { datatrailMemberOutput, heartbeatOutput } from '../event-status.js'
import { firstCompletions } from '../first-completions.js'
import type { DatatrailRecord, EventRecord, HeartbeatRecord, TraceRecord, TransitionRecord } from '../records.js'
import { storedStatus } from '../trace.js'
import { requestedSites } from './requested-sites.js'

/** One event's records as stored, whoever wrote them. */
export interface AuditedParts {
  event: Pick<EventRecord, 'timestamp' | 'actions'>
  trace: TraceRecord | null
  datatrail: readonly Pick<DatatrailRecord, 'member' | 'value'>[]
  heartbeats: readonly Pick<HeartbeatRecord, 'heartbeat'>[]
  /** The trace's recorded transitions, in any order. */
  transitions: readonly Pick<TransitionRecord, 'key' | 'to' | 'at'>[]
}

/** What the rules look at for one requested site, read as event status reads it. */
export interface SiteFacts {
  site: string
  /** Name of the site's datatrail member (`baseband`, `{site}_baseband`). */
  memberName: string
  member: DatatrailMember
  stages: Readonly<Record<Stage, StageStatus>>
  /** The site's heartbeats, in no particular order. */
  heartbeats: readonly Heartbeat[]
}

export interface EventFacts {
  classification: StageStatus
  sites: SiteFacts[]
  /** When each key was first recorded complete, seconds since the epoch. */
  firstCompletions: ReadonlyMap<string, number>
}

export function eventFacts(parts: AuditedParts, configuredSites: Sites): EventFacts {
  const members = new Map(parts.datatrail.map((item) => [item.member, item.value]))
  const heartbeats = parts.heartbeats.map((heartbeat) => heartbeatOutput(heartbeat.heartbeat))
  return {
    classification: storedStatus(parts.trace, CLASSIFICATION_KEY),
    firstCompletions: firstCompletions(parts.transitions),
    sites: requestedSites(parts.event.actions, configuredSites).map((site) => {
      const memberName = configuredSites.basebandKeyOf(site)
      return {
        site,
        memberName,
        // A member never written reads as event status shows it: not registered, no files.
        member: datatrailMemberOutput(members.get(memberName)),
        stages: siteStages(parts.trace, site),
        heartbeats: heartbeats.filter((heartbeat) => heartbeat.site === site)
      }
    })
  }
}

function siteStages(trace: TraceRecord | null, site: string): Record<Stage, StageStatus> {
  const entries = STAGES.map((stage) => [stage, storedStatus(trace, stageKey(stage, site))] as const)
  return Object.fromEntries(entries) as Record<Stage, StageStatus>
}

/** Every audited stage is complete: the classification and the four stages of every requested site. */
export const everyStageComplete = (facts: EventFacts) =>
  facts.classification === 'complete' && facts.sites.every((site) => STAGES.every((stage) => site.stages[stage] === 'complete'))
