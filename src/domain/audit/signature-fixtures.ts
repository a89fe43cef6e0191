import { createHash } from 'node:crypto'
import { CLASSIFICATION_KEY, siteModel, STAGES, stageKey, type Sites } from '../../vocabulary.js'
import type { EventRecord, TraceRecord } from '../records.js'
import type { EventRecords } from './kept-facts.js'

// Events that meet every rule, verdict and form between them: what signature.ts and outputSignature digest. Add a case
// with a rule or a form; never change one to keep a signature.

export const digestOf = (made: unknown): string => createHash('sha256').update(JSON.stringify(made)).digest('hex').slice(0, 32)

/** The sites the fixtures are made for: a primary site and three others, two of them requested. */
export const FIXTURE_SITES: Sites = siteModel(['chime', 'kko', 'gbo', 'hco'])

const T0 = Date.UTC(2026, 2, 1, 12)
const MINUTE = 60_000
const HOUR = 60 * MINUTE

/** When the fixtures are looked at: before, between and after the default deadlines. */
export const FIXTURE_CLOCKS: readonly number[] = [10 * MINUTE, 30 * MINUTE, 2 * HOUR, 7 * HOUR, 13 * HOUR, 72 * HOUR].map((after) => T0 + after)

/** One event's records as the rules read them, with the whole event record. */
export type FixtureEvent = EventRecords & { event: EventRecord | null }

function event(eventNo: number, want: Record<string, boolean>): EventRecord {
  return {
    event_no: eventNo,
    timestamp: T0 + eventNo,
    snr: 10 + eventNo / 4,
    dm: eventNo % 2 === 0 ? null : 100.5,
    known_source_name: eventNo % 3 === 0 ? 'GAL' : `FRB 2026030${eventNo % 10}`,
    tsar_classification: eventNo % 2 === 0 ? null : 'astrophysical',
    actions: { want: { intensity: true, ...want }, got: { intensity: eventNo % 2 === 1 } },
    baseband_requested: Object.entries(want).some(([key, wanted]) => key.endsWith('baseband') && wanted),
    update_timestamp: T0 / 1000 + eventNo
  }
}

/** A trace with `complete` at the given keys (short names: `tsar`, or `{stage}@{site}`), `not_required` where asked. */
function trace(eventNo: number, values: Record<string, string>): TraceRecord {
  const stored: TraceRecord = { event_no: eventNo, update_timestamp: T0 / 1000 + 60, writer_note: 'kept as written' }
  for (const [name, value] of Object.entries(values)) {
    const [stage, site] = name.split('@') as [string, string | undefined]
    stored[stage === 'tsar' ? CLASSIFICATION_KEY : `stages/${stage}/sites/${site}`] = value
  }
  return stored
}

const allComplete = (...sites: string[]): Record<string, string> =>
  Object.fromEntries([['tsar', 'complete'], ...sites.flatMap((site) => STAGES.map((stage) => [`${stage}@${site}`, 'complete'] as const))])

const member = (name: string, value: Record<string, unknown>) => ({ member: name, value })

const registered = (name: string, extra: Record<string, unknown> = {}) =>
  member(name, { registered: true, should_be_at_minoc: true, larger_dataset: {}, data_path: '/data', num_files: 10, missing_files: [], ...extra })

/** A heartbeat of `site`, finished with 10 files and no error unless told otherwise (the audit's unit tests build theirs with it too). */
export function fixtureHeartbeat(eventNo: number, id: number, site: string, options: { files?: number; finished?: boolean; error?: string | null } = {}) {
  return {
    heartbeat: {
      event_no: eventNo,
      heartbeat_id: id,
      site,
      sent: { trigger_time: '2026-03-01T12:00:05Z', error: options.error ?? null },
      received: {
        total_data_files: options.files ?? 10,
        dir_size_gb: 1.5,
        finished_time: options.finished === false ? null : '2026-03-01T13:00:00Z',
        heartbeat_sent_unix_s: T0 / 1000 + 3600
      }
    }
  }
}

const none = (): Pick<FixtureEvent, 'datatrail' | 'heartbeats' | 'transitions'> => ({ datatrail: [], heartbeats: [], transitions: [] })

export const FIXTURE_EVENTS: readonly FixtureEvent[] = [
  // Complete at the primary site, every record agreeing; a history with each key's first completion.
  {
    event: event(1, { baseband: true }),
    trace: trace(1, allComplete('chime')),
    datatrail: [registered('baseband')],
    heartbeats: [fixtureHeartbeat(1, 11, 'chime', { finished: false, files: 3 }), fixtureHeartbeat(1, 12, 'chime')],
    transitions: [
      { key: CLASSIFICATION_KEY, to: 'complete', at: T0 / 1000 + 30 },
      { key: stageKey('baseband_callback_request', 'chime'), to: 'complete', at: T0 / 1000 + 90 },
      { key: stageKey('baseband_callback_request', 'chime'), to: 'complete', at: T0 / 1000 + 80 }
    ]
  },
  // Two sites asked for, little done: in progress, then stuck stage after stage as the clock moves.
  { event: event(2, { baseband: true, kko_baseband: true }), trace: trace(2, { tsar: 'complete', 'baseband_callback_request@chime': 'complete' }), ...none() },
  // A later stage complete before earlier ones, and a stage not required (read as complete).
  {
    event: event(3, { kko_baseband: true }),
    trace: trace(3, { tsar: 'not_required', 'data_registration@kko': 'complete', 'data_replication_to_minoc@kko': 'complete' }),
    ...none(),
    datatrail: [registered('kko_baseband')]
  },
  // Registered in the trace, not in the datatrail; and the reverse at another site.
  {
    event: event(4, { baseband: true, gbo_baseband: true }),
    trace: trace(4, { tsar: 'complete', 'baseband_callback_request@chime': 'complete', 'baseband_conversion@chime': 'complete', 'data_registration@chime': 'complete' }),
    ...none(),
    datatrail: [member('baseband', { registered: false, num_files: 0, missing_files: [] }), registered('gbo_baseband')]
  },
  // Replicated with files missing, a heartbeat's count that disagrees, and a heartbeat's error.
  {
    event: event(5, { baseband: true }),
    trace: trace(5, allComplete('chime')),
    datatrail: [registered('baseband', { missing_files: ['a.h5', 'b.h5'], num_files: 12 })],
    heartbeats: [fixtureHeartbeat(5, 51, 'chime', { files: 9 }), fixtureHeartbeat(5, 52, 'chime', { finished: false, error: 'disk full on "node 3"' })],
    transitions: []
  },
  // Recorded complete before the event happened: a clock is wrong somewhere.
  {
    event: event(6, { hco_baseband: true }),
    trace: trace(6, allComplete('hco')),
    ...none(),
    datatrail: [registered('hco_baseband')],
    transitions: [{ key: stageKey('baseband_conversion', 'hco'), to: 'complete', at: T0 / 1000 - 120 }]
  },
  // Asks for no baseband data: not in the audit, though its records say much.
  { event: event(7, {}), trace: trace(7, allComplete('chime')), ...none(), heartbeats: [fixtureHeartbeat(7, 71, 'chime', { files: 1 })] },
  // Records of an event not written yet: a trace and a heartbeat first.
  { event: null, trace: trace(8, { tsar: 'complete' }), ...none(), heartbeats: [fixtureHeartbeat(8, 81, 'kko')] },
  // A site no longer configured, another program's values, and no trace at all.
  {
    event: event(9, { baseband: true, xyz_baseband: true }),
    trace: null,
    ...none(),
    datatrail: [member('baseband', { registered: 'yes' }), member('xyz_baseband', { registered: true, num_files: 1, missing_files: [] })],
    heartbeats: [fixtureHeartbeat(9, 91, 'xyz', { error: 'x' })]
  },
  // Classified by the event record while the trace's classification stays incomplete: the
  // classifier's trace update was lost (and, past the deadline, stuck beside it).
  { event: { ...event(10, { baseband: true }), tsar_classification: 'rfi' }, trace: trace(10, { 'baseband_callback_request@chime': 'complete' }), ...none() },
  // `unclassified` is no classification: only stuck, once the deadline passes.
  { event: { ...event(11, { baseband: true }), tsar_classification: 'unclassified' }, trace: trace(11, { tsar: 'incomplete' }), ...none() }
]
