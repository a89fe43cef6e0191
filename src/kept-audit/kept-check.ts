import { isDeepStrictEqual } from 'node:util'
import type { AuditSettings } from '../domain/audit/audit-event.js'
import { auditedEventRecord } from '../domain/audit/audited-event.js'
import type { KeptFacts } from '../domain/audit/kept-facts.js'
import { lookAt, type KeptLook } from '../domain/audit/kept-look.js'
import { auditOfReport, fixedAuditOf, isFixed, type KeptReport, type WindowEntry } from '../domain/audit/kept-report.js'

/**
 * One event's kept audit as a store holds it, in every part a read serves: the facts, the entry a
 * window read sends (the report, or the fixed audit with the verdict the window's summary and
 * filters read), the time the window orders it by, and the last look (verdict, next deadline,
 * stuck stages). `entry` is null where the store keeps facts of an event outside the audit.
 */
export interface KeptRow {
  facts: KeptFacts
  entry: WindowEntry | null
  /** The event time the window range reads, ms; null where no entry is kept. */
  event_time: number | null
  look: KeptLook
}

/** A part of a kept row that can differ from what its records make. */
export type KeptPart = 'row' | 'facts' | 'record' | 'event_time' | 'verdict' | 'due_at' | 'stuck'

/**
 * The parts that are the row's look: made with the store's own deadlines, and read by the deadline
 * check and the live streams, not by a window's report (which audits the entry at the reader's
 * clock and deadlines). A check that only reports, for a command that may run with other deadlines,
 * leaves them out: they would all differ, and none would be a fault.
 */
export const LOOK_PARTS: readonly KeptPart[] = ['verdict', 'due_at', 'stuck']

/** The parts a check that does not repair reports (see LOOK_PARTS). */
export const reportedParts = (parts: readonly KeptPart[]) => parts.filter((part) => !LOOK_PARTS.includes(part))

/** The window record an entry serves at the settings' clock, as the text a read sends. */
function servedText(entry: WindowEntry, settings: AuditSettings): string {
  if (isFixed(entry)) return entry.json
  return JSON.stringify(auditedEventRecord({ event_no: entry.event_no, ...entry.event }, auditOfReport(entry, settings)))
}

/** The verdict the window's summary and filters count an entry under. */
const servedVerdict = (entry: WindowEntry, settings: AuditSettings) => (isFixed(entry) ? entry.verdict : auditOfReport(entry, settings).verdict)

/**
 * The clock a kept look must agree with. A look is made at some moment and stays right until its
 * next deadline passes, when the deadline check looks again; a look whose deadline passed a moment
 * ago and is not yet looked at again is checked just before that deadline, so that it is not
 * counted as differing for the half-second the check takes to reach it.
 */
const lookClock = (look: KeptLook, now: number) => (look.due_at !== null && look.due_at <= now ? look.due_at - 1 : now)

/**
 * Where a kept row differs from what the event's records make of it now, in every part a read
 * serves: none when it agrees. This, not a comparison of the facts alone, is what the verifier and
 * `tracer audit --recompute` hold each kept row to: a row whose facts are right but whose verdict,
 * record, deadline or stuck stages were changed (by a bug, or another program) is found too.
 */
export function keptDifferences(kept: KeptRow | null, recomputed: KeptFacts, settings: AuditSettings): KeptPart[] {
  const expected = lookAt(recomputed, settings)
  if (expected.report === null) {
    // Outside the audit: no row, or (MongoDB keeps facts of every event) one that serves nothing.
    if (kept === null) return []
    const serves = kept.entry !== null || kept.look.verdict !== null || kept.look.due_at !== null || kept.look.stuck.length > 0
    if (serves) return ['row']
    return isDeepStrictEqual(kept.facts, recomputed) ? [] : ['facts']
  }
  if (kept === null || kept.entry === null) return ['row']
  const parts: KeptPart[] = []
  if (!isDeepStrictEqual(kept.facts, recomputed)) parts.push('facts')
  const entry = fixedAuditOf(expected.report, expected.audit!) ?? expected.report
  if (
    kept.entry.event_no !== recomputed.event_no ||
    servedText(kept.entry, settings) !== servedText(entry, settings) ||
    servedVerdict(kept.entry, settings) !== expected.audit!.verdict
  ) {
    parts.push('record')
  }
  if (kept.event_time !== null && kept.event_time !== recomputed.event!.timestamp) parts.push('event_time')
  const clock = lookClock(kept.look, settings.now)
  const look = clock === settings.now ? expected.look : lookAt(recomputed, { ...settings, now: clock }).look
  if (kept.look.verdict !== look.verdict) parts.push('verdict')
  if (kept.look.due_at !== look.due_at) parts.push('due_at')
  if (!isDeepStrictEqual(kept.look.stuck, look.stuck)) parts.push('stuck')
  return parts
}

/**
 * How much later than the clock now a kept look may have been made before it is made again: a
 * clock that stepped back (an NTP correction, a host's clock set right) leaves looks made under
 * the later clock, whose stuck stages are not stuck yet. Instances sharing a store differ by far
 * less than this, so they do not make each other's looks again.
 */
export const LOOK_CLOCK_TOLERANCE_MS = 1000

/**
 * Whether an error is a kept row's (or a record's) content that cannot be read, as opposed to the
 * store failing: text that is not JSON, or a value of the wrong shape. Such a row is one event's
 * trouble, to repair from its records; any other error is the store's, for every event alike.
 */
export const isUnreadableContent = (error: unknown) => error instanceof SyntaxError || error instanceof TypeError || error instanceof RangeError

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * Whether a value read back as a kept report has the report's shape, as far as a window read relies
 * on it: a row another program wrote is not trusted to be one, and one that is not is made again
 * from its records rather than fail the whole window.
 */
export function isKeptReport(value: unknown): value is KeptReport {
  if (!isObject(value) || !isObject(value.event)) return false
  const { event } = value
  return (
    typeof value.event_no === 'number' &&
    typeof event.timestamp === 'number' &&
    typeof event.snr === 'number' &&
    typeof event.known_source_name === 'string' &&
    Array.isArray(value.sites) &&
    Array.isArray(value.contradictions) &&
    Array.isArray(value.pending) &&
    value.pending.every((item) => Array.isArray(item) && item.length === 2) &&
    typeof value.complete === 'boolean'
  )
}
