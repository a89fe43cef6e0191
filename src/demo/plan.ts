import { STAGES, type Stage } from '../domain/trace.js'
import type { Random } from './random.js'

/** How the real system sometimes contradicts itself; a demo event has at most one of these. */
export const Inconsistency = {
  none: 0,
  /** A datatrail member's `registered` disagrees with the trace's data_registration. */
  registered: 1,
  /** A heartbeat reports an error for data the trace says was converted. */
  heartbeatError: 2,
  /** actions.got disagrees with the trace's baseband_conversion. */
  got: 3,
  /** Datatrail and heartbeats for an event that has no trace. */
  orphanParts: 4
} as const
const KINDS = 4
const INCONSISTENT_SHARE = 0.04

/** Each stage's chance to complete once the one before it has: later stages lag behind. */
const STAGE_CHANCES: Readonly<Record<Stage, number>> = {
  baseband_callback_request: 0.97,
  baseband_conversion: 0.9,
  data_registration: 0.85,
  data_replication_to_minoc: 0.8
}
/** The same in pipeline order, for the loop that draws them. */
const CHANCES = STAGES.map((stage) => STAGE_CHANCES[stage])
const TRACE_SHARE = 0.93
const OUTRIGGER_SHARE = 0.65
export const FILES_PER_DUMP = 1024
const MAX_MISSING = 40

/**
 * Where one baseband event got to at each site. One instance is reused for every event (typed
 * arrays, no allocation per event); `draw` overwrites it.
 */
export class BasebandPlan {
  hasTrace = false
  inconsistency: number = Inconsistency.none
  /** Complete stages at each site, in pipeline order; -1 where no baseband data was asked for. */
  readonly progress: Int8Array
  /** Sites not asked for whose trace says `not_required` (otherwise `incomplete`, as initialised). */
  readonly notRequired: Uint8Array
  /** Replication to the archive not needed for this dump: `not_required`, should_be_at_minoc false. */
  readonly noReplication: Uint8Array
  /** Files of the dump not (yet) converted. */
  readonly missing: Int16Array

  constructor(readonly siteCount: number) {
    this.progress = new Int8Array(siteCount)
    this.notRequired = new Uint8Array(siteCount)
    this.noReplication = new Uint8Array(siteCount)
    this.missing = new Int16Array(siteCount)
  }

  /** A new plan: the primary site always dumps, outriggers often; recent events are less far along. */
  draw(random: Random, ageDays: number): this {
    this.hasTrace = random() < TRACE_SHARE
    this.inconsistency = random() < INCONSISTENT_SHARE ? 1 + Math.floor(random() * KINDS) : Inconsistency.none
    const happened = this.hasTrace || this.inconsistency === Inconsistency.orphanParts
    const recency = ageDays < 1 ? 0.75 : ageDays < 3 ? 0.9 : 1
    for (let site = 0; site < this.siteCount; site++) {
      const requested = site === 0 || random() < OUTRIGGER_SHARE
      this.notRequired[site] = requested ? 0 : random() < 0.85 ? 1 : 0
      let done = requested ? 0 : -1
      if (requested && happened) while (done < STAGES.length && random() < CHANCES[done]! * recency) done++
      this.progress[site] = done
      this.noReplication[site] = requested && random() < 0.1 ? 1 : 0
      this.missing[site] = done === 1 ? 1 + Math.floor(random() * MAX_MISSING) : 0
    }
    return this
  }

  requested = (site: number) => this.progress[site]! >= 0
  /** The site dumped data: the callback request went through. */
  dumped = (site: number) => this.progress[site]! >= 1
  converted = (site: number) => this.progress[site]! >= 2
  registered = (site: number) => this.progress[site]! >= 3
}
