import type { Document } from 'mongodb'
import type { VerdictChange } from '../../../schemas/audit.js'
import type { KeptFacts } from '../../domain/audit/kept-facts.js'
import type { KeptLook } from '../../domain/audit/kept-look.js'
import type { KeptReport } from '../../domain/audit/kept-report.js'
import type { KeptRow } from '../../kept-audit/kept-check.js'
import { numberIn, plain } from './documents.js'

/**
 * One event's kept audit in the `audit` collection:
 * `{event_no, facts, report, verdict, due_at, stuck, listed, event_time, rev, change?}`. `listed` and
 * `event_time` repeat what the facts say of the event so that the window audit is one index range
 * ({listed, event_time, event_no}); `due_at` is indexed for the deadline check. `rev` counts the
 * document's writes: every write is conditional on the rev it read (compare-and-set), which is what
 * lets several instances and the change-stream watcher write it without a transaction.
 *
 * `change` is the verdict change the write of revision `rev` recorded, as `{rev, value}`, set in the
 * same update as the look it comes from: the verdict feed reads it from the collection's change
 * stream. The rev inside makes each recorded change a new value, so that the server reports it even
 * when it equals the one before (an unchanged field is not in an update's description).
 */
export interface AuditDocument {
  event_no: number
  facts: KeptFacts
  /** Null for an event that is not in the audit. */
  report: KeptReport | null
  verdict: KeptLook['verdict']
  due_at: number | null
  stuck: string[]
  listed: boolean
  event_time: number | null
  /** The clock the look was made at, ms: a look made under a clock that later moved back is made again. */
  looked_at: number
  rev: number
  change?: { rev: number; value: VerdictChange }
}

/** The `_id` of the one document of the collection that is no event's: the settings the kept looks were made with. */
export const AUDIT_SETTINGS_ID = 'settings'

/** An audit document as read: everything a read serves of it, and the revision a write must find to replace them. */
export interface KeptDocument extends KeptRow {
  /** Undefined for a document without one (written by hand): a write then finds `rev` missing. */
  rev: number | undefined
  /** Null for a document written before looks kept their clock. */
  looked_at: number | null
}

/** The projection of a document's kept audit: everything but the recorded change, which only the feed reads. */
export const KEPT_ONLY = { projection: { _id: 0, change: 0 } } as const

const stringsIn = (value: unknown): string[] => (Array.isArray(value) ? value.filter((item) => typeof item === 'string') : [])

/** A stored document as the keeper reads it, with its revision. */
export function keptIn(stored: Document): KeptDocument {
  const document = plain(stored) as Record<string, unknown>
  const verdict = typeof document.verdict === 'string' ? (document.verdict as KeptLook['verdict']) : null
  const dueAt = numberIn(document.due_at, Number.NaN)
  const eventTime = numberIn(document.event_time, Number.NaN)
  const lookedAt = numberIn(document.looked_at, Number.NaN)
  return {
    facts: document.facts as KeptFacts,
    look: { verdict, due_at: Number.isNaN(dueAt) ? null : dueAt, stuck: stringsIn(document.stuck) },
    // What the window serves: the report of a listed document (the window's index reads `listed`).
    entry: document.listed === true ? (document.report as KeptReport | null) : null,
    event_time: Number.isNaN(eventTime) ? null : eventTime,
    rev: typeof document.rev === 'number' ? document.rev : undefined,
    looked_at: Number.isNaN(lookedAt) ? null : lookedAt
  }
}

/**
 * A value as it reads back: what JSON keeps of it. Facts and changes are stored in this form, so a
 * document read back compares equal to what was written (the driver would store an `undefined` as
 * null), and a change reaches the feed's readers as it would have been sent.
 */
export const asStored = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T

/** The fields a look made at the clock `at` (ms) sets. */
export const lookFields = (look: KeptLook, at: number) => ({ verdict: look.verdict, due_at: look.due_at, stuck: look.stuck, looked_at: at })

/** The fields facts set: the facts themselves, the report a window read takes (kept-report.ts), and what the window index reads of them. */
export const factFields = (facts: KeptFacts, report: KeptReport | null) => ({
  facts,
  report: asStored(report),
  listed: facts.event?.listed === true,
  event_time: facts.event?.timestamp ?? null
})
