import type { Sites, Stage, StageStatus } from '../../vocabulary.js'
import type { EventRecord, TraceRecord, TransitionRecord, DatatrailRecord, HeartbeatRecord } from '../records.js'
import { STAGES } from '../../vocabulary.js'
import { siteFacts, type KeptEvent, type KeptFacts, type KeptSite, type MemberFacts } from './kept-facts.js'

/** One event's records as stored, whoever wrote them. */
export interface AuditedParts {
  event: Pick<EventRecord, 'timestamp' | 'actions' | 'tsar_classification'>
  trace: TraceRecord | null
  datatrail: readonly Pick<DatatrailRecord, 'member' | 'value'>[]
  heartbeats: readonly Pick<HeartbeatRecord, 'heartbeat'>[]
  /** The trace's recorded transitions, in any order. */
  transitions: readonly Pick<TransitionRecord, 'key' | 'to' | 'at'>[]
}

/** What the rules look at for one requested site. */
export interface SiteFacts extends Pick<KeptSite, 'last_finished' | 'last_error'> {
  site: string
  /** Name of the site's datatrail member (`baseband`, `{site}_baseband`). */
  memberName: string
  /** A member never written reads as event status shows it: not registered, no files. */
  member: MemberFacts
  stages: Readonly<Record<Stage, StageStatus>>
}

export interface EventFacts {
  /** The trace's `stages/tsar_classification`. */
  classification: StageStatus
  /** The classification the event record holds, null when it holds none (KeptEvent.tsar_classification). */
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
    sites: event.requested.map((site) => {
      const kept = siteFacts(facts, site)
      return {
        site,
        memberName: configuredSites.basebandKeyOf(site),
        member: kept.member,
        stages: kept.stages,
        last_finished: kept.last_finished,
        last_error: kept.last_error
      }
    })
  }
}

/** Every audited stage is complete: the classification and the four stages of every requested site. */
export const everyStageComplete = (facts: EventFacts) =>
  facts.classification === 'complete' && facts.sites.every((site) => STAGES.every((stage) => site.stages[stage] === 'complete'))
