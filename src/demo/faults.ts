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
export const FAULT_ROTATION: readonly Fault[] = [
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
export function faultFits(fault: Fault, progress: number, noReplication: boolean, classified: boolean): boolean {
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
