import { STAGES, type Stage } from '../vocabulary.js'
import type { Random } from './random.js'

/** How the pipeline's records of one site contradict each other, as seen in practice: each is what one audit rule looks for, but `got`. */
export const Fault = {
  none: 0,
  /** The trace says registered; the datatrail never saw the registration (registered-not-in-datatrail). */
  registrationNotInDatatrail: 1,
  /** The datatrail registered the data; the trace was never told (datatrail-not-in-trace). */
  registrationNotInTrace: 2,
  /** Replication marked complete while files of the dump are missing (replicated-with-missing-files). */
  replicatedWithMissingFiles: 3,
  /** Registered before the conversion wrote its last files: fewer than its heartbeat counts (file-count-mismatch). */
  fileCountMismatch: 4,
  /** The conversion's heartbeat reported an error, yet the trace says it completed (heartbeat-error). */
  heartbeatError: 5,
  /** An earlier stage's update was lost while later ones arrived (out-of-order). */
  lostUpdate: 6,
  /** actions.got disagrees with the trace's baseband_conversion (no audit rule reads actions.got). */
  got: 7,
  /** The site's clock ran half a day behind, so its stages were recorded complete before the event (completed-before-event). */
  clockBehind: 8,
  /**
   * The classifier's trace update was lost: classified in the event, incomplete in the trace
   * (classified-not-in-trace). The event's fault, placed at a site only to take its turn.
   */
  classificationLost: 9
} as const
export type Fault = (typeof Fault)[keyof typeof Fault]

/** The order faults come in, so that a few hundred baseband events show every kind several times. */
const FAULT_ROTATION: readonly Fault[] = [
  Fault.registrationNotInDatatrail,
  Fault.heartbeatError,
  Fault.replicatedWithMissingFiles,
  Fault.lostUpdate,
  Fault.fileCountMismatch,
  Fault.registrationNotInTrace,
  Fault.clockBehind,
  Fault.classificationLost
]

// Complete stages at a site once its data is converted, registered, replicated.
const CONVERTED = 2
const REGISTERED = 3
const REPLICATED = 4

/** Whether a site that completed `progress` stages can have the fault: records cannot contradict work not done yet. */
function faultFits(fault: Fault, progress: number, noReplication: boolean, classified: boolean): boolean {
  switch (fault) {
    case Fault.registrationNotInDatatrail:
    case Fault.registrationNotInTrace:
    case Fault.fileCountMismatch:
      return progress >= REGISTERED
    case Fault.replicatedWithMissingFiles:
      return progress >= REPLICATED && !noReplication
    case Fault.heartbeatError:
    case Fault.lostUpdate:
      return progress >= CONVERTED
    case Fault.clockBehind:
      return progress >= 1
    case Fault.classificationLost:
      return classified
    default:
      return true
  }
}

/**
 * Each stage's chance to complete once the one before it has (the rest fail and wait for someone),
 * and how long it then takes in minutes, fastest and slowest. Even the slowest completes well within
 * its default deadline, so a young event is in progress, and only a failed stage gets stuck.
 */
const STAGE_PACE: Readonly<Record<Stage, { chance: number; minutes: readonly [number, number] }>> = {
  baseband_callback_request: { chance: 0.997, minutes: [1, 10] },
  baseband_conversion: { chance: 0.985, minutes: [10, 60] },
  data_registration: { chance: 0.99, minutes: [20, 180] },
  data_replication_to_minoc: { chance: 0.98, minutes: [60, 720] }
}
// The same in pipeline order, for the loop that draws them.
const CHANCES = STAGES.map((stage) => STAGE_PACE[stage].chance)
const FASTEST_MS = STAGES.map((stage) => STAGE_PACE[stage].minutes[0] * 60_000)
const SPREAD_MS = STAGES.map((stage) => (STAGE_PACE[stage].minutes[1] - STAGE_PACE[stage].minutes[0]) * 60_000)

const TRACE_SHARE = 0.96
/** Events without a trace whose sites dumped data all the same: the trace was never created. */
const ORPHAN_SHARE = 0.15
const OUTRIGGER_SHARE = 0.65
/** Baseband events with a trace from one fault to the next: a steady pace, so that every day of even a small demo shows some. */
const FAULT_GAP = { fewest: 8, most: 12 }
/** Chance that actions.got at the primary site disagrees with the trace, besides the faults above. */
const GOT_WRONG_SHARE = 0.01
export const FILES_PER_DUMP = 1024
const MAX_MISSING = 40

/** Where one baseband event got to at each site: one instance (typed arrays) that `draw` overwrites for every event. */
export class BasebandPlan {
  hasTrace = false
  /** Baseband events with a trace still to come before the next fault is due. */
  private untilFault = FAULT_GAP.fewest
  /** Position of the next fault in FAULT_ROTATION. */
  private nextFault = 0
  /** Complete stages at each site, in pipeline order; -1 where no baseband data was asked for. */
  readonly progress: Int8Array
  /** When each complete stage completed, ms after the event: index site * STAGES.length + stage. */
  readonly completedAfter: Float64Array
  /** 1 where the stage after the complete ones is still under way, 0 where it failed (or none is left). */
  readonly underWay: Uint8Array
  /** Sites not asked for whose trace says `not_required` (otherwise `incomplete`, as initialised). */
  readonly notRequired: Uint8Array
  /** Replication to the archive not needed for this dump: `not_required`, should_be_at_minoc false. */
  readonly noReplication: Uint8Array
  /** Files of the dump not converted (yet), or lost on the way to the archive. */
  readonly missing: Int16Array
  /** How the site's records contradict each other (a Fault); at most one per site. */
  readonly fault: Uint8Array
  /** The stage whose update was lost, for Fault.lostUpdate. */
  readonly lostStage: Int8Array

  constructor(readonly siteCount: number) {
    this.progress = new Int8Array(siteCount)
    this.completedAfter = new Float64Array(siteCount * STAGES.length)
    this.underWay = new Uint8Array(siteCount)
    this.notRequired = new Uint8Array(siteCount)
    this.noReplication = new Uint8Array(siteCount)
    this.missing = new Int16Array(siteCount)
    this.fault = new Uint8Array(siteCount)
    this.lostStage = new Int8Array(siteCount)
  }

  /** The event was classified by the time of the plan. */
  private classified = false

  /** A new plan: the primary site always dumps, outriggers often; stages complete as time passes. */
  draw(random: Random, ageMs: number, classified: boolean): this {
    this.classified = classified
    this.hasTrace = random() < TRACE_SHARE
    const happened = this.hasTrace || random() < ORPHAN_SHARE
    for (let site = 0; site < this.siteCount; site++) {
      const requested = site === 0 || random() < OUTRIGGER_SHARE
      this.notRequired[site] = requested ? 0 : random() < 0.85 ? 1 : 0
      this.underWay[site] = 0
      this.progress[site] = requested ? (happened ? this.advance(random, site, ageMs) : 0) : -1
      this.noReplication[site] = requested && random() < 0.1 ? 1 : 0
      this.missing[site] = this.progress[site] === 1 ? 1 + Math.floor(random() * MAX_MISSING) : 0
      this.fault[site] = Fault.none
    }
    if (this.hasTrace && --this.untilFault <= 0) this.placeFault(random)
    if (this.fault[0] === Fault.none && random() < GOT_WRONG_SHARE) this.fault[0] = Fault.got
    return this
  }

  /** Gives one requested site a fault its progress allows; when none does, the fault waits for the next event. */
  private placeFault(random: Random): void {
    const fault = FAULT_ROTATION[this.nextFault]!
    const first = Math.floor(random() * this.siteCount)
    for (let next = 0; next < this.siteCount; next++) {
      const site = (first + next) % this.siteCount
      const progress = this.progress[site]!
      if (progress < 0 || !faultFits(fault, progress, this.noReplication[site] === 1, this.classified)) continue
      this.fault[site] = fault
      if (fault === Fault.replicatedWithMissingFiles) this.missing[site] = 1 + Math.floor(random() * MAX_MISSING)
      // The lost update is the callback request's or, once registered, the conversion's.
      if (fault === Fault.lostUpdate) this.lostStage[site] = progress > 2 && random() < 0.5 ? 1 : 0
      this.nextFault = (this.nextFault + 1) % FAULT_ROTATION.length
      this.untilFault = FAULT_GAP.fewest + Math.floor(random() * (FAULT_GAP.most - FAULT_GAP.fewest + 1))
      return
    }
  }

  /** Completes stage after stage, until one fails or is still under way at `ageMs`; their count. */
  private advance(random: Random, site: number, ageMs: number): number {
    let done = 0
    let at = 0
    while (done < STAGES.length && random() < CHANCES[done]!) {
      at += FASTEST_MS[done]! + random() * SPREAD_MS[done]!
      if (at > ageMs) {
        this.underWay[site] = 1
        break
      }
      this.completedAfter[site * STAGES.length + done] = at
      done++
    }
    return done
  }

  /** The classifier's update of the trace was lost (Fault.classificationLost, at whichever site it was placed). */
  classificationLost = () => this.fault.includes(Fault.classificationLost)
  requested = (site: number) => this.progress[site]! >= 0
  /** The site dumped data: the callback request went through. */
  dumped = (site: number) => this.progress[site]! >= 1
  converted = (site: number) => this.progress[site]! >= 2
  registered = (site: number) => this.progress[site]! >= 3
  /** ms after the event at which the stage (an index in STAGES) completed at the site. */
  completedAt = (site: number, stage: number) => this.completedAfter[site * STAGES.length + stage]!
}
