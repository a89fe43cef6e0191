import type { AuditFinding, AuditVerdict } from './api-types.js'
import type { PipelineStage } from '../../src/vocabulary.js'

export type { PipelineStage }

/** What a cell or an event shows: the audit's verdicts, with the page's word for each. */
export type CellState = AuditVerdict

export const STATE_LABELS: Readonly<Record<CellState, string>> = {
  complete: 'complete',
  in_progress: 'in progress',
  stuck: 'stuck',
  contradiction: 'contradiction'
}

/** A shape beside each label, so that the states differ by more than colour even at a glance. */
export const STATE_MARKS: Readonly<Record<CellState, string>> = {
  complete: '✓',
  in_progress: '○',
  stuck: '▲',
  contradiction: '✕'
}

export const STATE_MEANINGS: Readonly<Record<CellState, string>> = {
  complete: 'done (or not required), and no check disagrees',
  in_progress: 'not done yet, still within its deadline',
  stuck: 'not done, and past its deadline',
  contradiction: 'two records of the event disagree'
}

export const STAGE_LABELS: Readonly<Record<PipelineStage, string>> = {
  tsar_classification: 'Classification',
  baseband_callback_request: 'Callback request',
  baseband_conversion: 'Conversion',
  data_registration: 'Registration',
  data_replication_to_minoc: 'Replication'
}

export const RULE_LABELS: Readonly<Record<AuditFinding['rule'], string>> = {
  stuck: 'Stuck',
  'out-of-order': 'Out of order',
  'completed-before-event': 'Complete before the event',
  'registered-not-in-datatrail': 'Registered, not in datatrail',
  'datatrail-not-in-trace': 'In datatrail, not in trace',
  'replicated-with-missing-files': 'Replicated with missing files',
  'file-count-mismatch': 'File count mismatch',
  'heartbeat-error': 'Heartbeat error',
  'classified-not-in-trace': 'Classified, not in trace'
}

/** Where a finding points: `kko · Conversion`, or the stage alone for the classification. */
export function placeOf(site: string | null, stage: PipelineStage | null): string {
  const stageText = stage === null ? 'Event' : STAGE_LABELS[stage]
  return site === null ? stageText : `${site} · ${stageText}`
}
