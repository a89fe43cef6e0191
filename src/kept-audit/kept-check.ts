import { isDeepStrictEqual } from 'node:util'
import type { AuditSettings } from '../domain/audit/audit-event.js'
import { auditedEventRecord } from '../domain/audit/audited-event.js'
import type { KeptFacts } from '../domain/audit/kept-facts.js'
import { lookAt, type KeptLook } from '../domain/audit/kept-look.js'
import { auditOfReport, fixedAuditOf, isFixed, type KeptReport, type WindowEntry } from '../domain/audit/kept-report.js'

/** One event's kept audit in every part a read serves; `entry` is null where a store keeps facts of an event outside the audit. */
export interface KeptRow {
  facts: KeptFacts
  entry: WindowEntry | null
  /** The event time the window range reads, ms; null where no entry is kept. */
  event_time: number | null
  look: KeptLook
}

export type KeptPart = 'row' | 'facts' | 'record' | 'event_time' | 'verdict' | 'due_at' | 'stuck'

/** The look's parts, made with the store's deadlines: a check for a command with other deadlines leaves them out. */
export const LOOK_PARTS: readonly KeptPart[] = ['verdict', 'due_at', 'stuck']

export const reportedParts = (parts: readonly KeptPart[]) => parts.filter((part) => !LOOK_PARTS.includes(part))

function servedText(entry: WindowEntry, settings: AuditSettings): string {
  if (isFixed(entry)) return entry.json
  return JSON.stringify(auditedEventRecord({ event_no: entry.event_no, ...entry.event }, auditOfReport(entry, settings)))
}

const servedVerdict = (entry: WindowEntry, settings: AuditSettings) => (isFixed(entry) ? entry.verdict : auditOfReport(entry, settings).verdict)

/** A look whose deadline just passed is held to the moment before it: the deadline check has not reached it yet. */
const lookClock = (look: KeptLook, now: number) => (look.due_at !== null && look.due_at <= now ? look.due_at - 1 : now)

/** Where a kept row differs from what its records make now, in every part a read serves, not only its facts. */
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

/** How much later than now a look may have been made before it is made again: more than instances sharing a store differ by. */
export const LOOK_CLOCK_TOLERANCE_MS = 1000

/** Whether an error is one row's unreadable content (one event's trouble, repaired from its records), not the store failing. */
export const isUnreadableContent = (error: unknown) => error instanceof SyntaxError || error instanceof TypeError || error instanceof RangeError

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/** Whether a value read back has a kept report's shape as far as a window read relies on it: another program's row is not trusted. */
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
