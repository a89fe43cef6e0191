import type { DatatrailMember } from '../../../schemas/datatrail.js'
import type { Heartbeat } from '../../../schemas/heartbeats.js'
import type { StoredDatatrail, StoredEvent, StoredHeartbeat } from '../../store/port.js'
import { datatrailMemberOutput, heartbeatOutput } from '../event-status.js'
import { CLASSIFICATION_KEY, STAGES, stageKey, storedStatus, type Stage, type StageStatus, type StoredTrace } from '../trace.js'
import { basebandMember, requestedSites } from './requested-sites.js'

/** One event's records as stored, whoever wrote them. */
export interface AuditedParts {
  event: Pick<StoredEvent, 'timestamp' | 'actions'>
  trace: StoredTrace | null
  datatrail: readonly Pick<StoredDatatrail, 'member' | 'value'>[]
  heartbeats: readonly Pick<StoredHeartbeat, 'record'>[]
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
}

export function eventFacts(parts: AuditedParts, configuredSites: readonly string[]): EventFacts {
  const members = new Map(parts.datatrail.map((item) => [item.member, item.value]))
  const heartbeats = parts.heartbeats.map((heartbeat) => heartbeatOutput(heartbeat.record))
  return {
    classification: storedStatus(parts.trace, CLASSIFICATION_KEY),
    sites: requestedSites(parts.event.actions, configuredSites).map((site) => {
      const memberName = basebandMember(site, configuredSites)
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

function siteStages(trace: StoredTrace | null, site: string): Record<Stage, StageStatus> {
  const entries = STAGES.map((stage) => [stage, storedStatus(trace, stageKey(stage, site))] as const)
  return Object.fromEntries(entries) as Record<Stage, StageStatus>
}

/** Every audited stage is complete: the classification and the four stages of every requested site. */
export const everyStageComplete = (facts: EventFacts) =>
  facts.classification === 'complete' && facts.sites.every((site) => STAGES.every((stage) => site.stages[stage] === 'complete'))
