import { CLASSIFICATION_STAGE, type PipelineStage, type Stage } from '../../vocabulary.js'

/** Each rule's `detail`, worded once: what holds, `but` (or `while`) what contradicts it; no final period, as in a log line. */
export const details = {
  stuck: (stage: PipelineStage, site: string | null, elapsedMs: number, deadlineMs: number) =>
    `${stageAt(stage, site)} incomplete ${elapsed(elapsedMs)} after the event; deadline ${duration(deadlineMs)}`,
  outOfOrder: (stage: Stage, site: string, earlier: readonly Stage[]) =>
    `${stageAt(stage, site)} complete while earlier ${earlier.length === 1 ? 'stage' : 'stages'} ` +
    `${earlier.join(', ')} ${earlier.length === 1 ? 'is' : 'are'} incomplete`,
  registeredNotInDatatrail: (site: string, member: string) =>
    `${stageAt('data_registration', site)} complete but datatrail member ${member} is not registered`,
  datatrailNotInTrace: (site: string, member: string) =>
    `datatrail member ${member} is registered but ${stageAt('data_registration', site)} is incomplete`,
  replicatedWithMissingFiles: (site: string, member: string, missing: number) =>
    `${stageAt('data_replication_to_minoc', site)} complete but datatrail member ${member} lists ` +
    `${missing} missing ${missing === 1 ? 'file' : 'files'}`,
  fileCountMismatch: (site: string, heartbeatId: number, reported: number, member: string, registered: number) =>
    `heartbeat ${heartbeatId} at ${site} reports ${reported} data files but datatrail member ${member} has num_files ${registered}`,
  completedBeforeEvent: (stage: PipelineStage, site: string | null, earlierMs: number) =>
    `${stageAt(stage, site)} was recorded complete ${elapsed(earlierMs)} before the event; an event time or a writer's clock is wrong`,
  classifiedNotInTrace: (classification: string) =>
    `the event is classified ${quoted(classification)} but ${CLASSIFICATION_STAGE} is incomplete in the trace`,
  heartbeatError: (site: string, heartbeatId: number, error: string) =>
    `heartbeat ${heartbeatId} at ${site} reports the error ${quoted(error)} but ${stageAt('baseband_conversion', site)} is complete`
}

const stageAt = (stage: PipelineStage, site: string | null) => (site === null ? stage : `${stage} at ${site}`)

const HOUR = 3_600_000
const MINUTE = 60_000

/** A configured deadline, exact, in the largest of h, min, s that divides it. */
export function duration(ms: number): string {
  if (ms % HOUR === 0) return `${ms / HOUR} h`
  if (ms % MINUTE === 0) return `${ms / MINUTE} min`
  return `${ms / 1000} s`
}

/** Time since the event, to a tenth of the largest of h, min, s it reaches. */
export function elapsed(ms: number): string {
  if (ms >= HOUR) return `${(ms / HOUR).toFixed(1)} h`
  if (ms >= MINUTE) return `${(ms / MINUTE).toFixed(1)} min`
  return `${(ms / 1000).toFixed(1)} s`
}

const MAX_QUOTED = 200

/** Another program's error text, on one line and of bounded length. */
function quoted(text: string): string {
  return JSON.stringify(text.length > MAX_QUOTED ? `${text.slice(0, MAX_QUOTED)}…` : text)
}
