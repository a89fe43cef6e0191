import type { VerdictChange } from '../../schemas/audit.js'
import type { AuditSettings } from '../domain/audit/audited-event.js'
import { LOOK_CLOCK_TOLERANCE_MS } from './kept-check.js'
import { compact, type KeptFacts } from '../domain/audit/kept-facts.js'
import { lookAt, NOT_AUDITED, sameLook, verdictChange, type KeptLook } from '../domain/audit/kept-look.js'
import { fixedAuditOf, type FixedAudit, type KeptReport } from '../domain/audit/kept-report.js'

// What a store writes of an event's audit, and the verdict change beside it: decided here once for both adapters.

/** What an event was before a write or a repair: its look, and the sites it asked for (none outside the audit). */
export interface Before {
  look: KeptLook
  sites: readonly string[]
}

export const OUTSIDE: Before = { look: NOT_AUDITED, sites: [] }

/** What a kept audit was before it changes: the sites a stream filter last saw the event under are its facts' while it was in the audit. */
export function beforeOf({ facts, look }: { facts: KeptFacts; look: KeptLook }): Before {
  // Facts read back may be another program's: only an array of sites is taken as one.
  const requested: unknown = look.verdict === null ? undefined : (facts as Partial<KeptFacts> | null)?.event?.requested
  return { look, sites: Array.isArray(requested) ? [...(requested as string[])] : [] }
}

export interface KeptWrite {
  /** The facts, in their one kept form (compacted). */
  facts: KeptFacts
  /** What a window read takes; null for an event outside the audit (SQLite keeps no row of it). */
  report: KeptReport | null
  /** The audit no clock can change, as the text a window read sends; null while a stage is pending. */
  fixed: FixedAudit | null
  look: KeptLook
  change: VerdictChange | null
}

/** The write an event's facts make at the settings' clock, with the verdict change against `before` (none when null: a rebuild). */
export function keptWriteOf(facts: KeptFacts, before: Before | null, settings: AuditSettings): KeptWrite {
  compact(facts)
  const after = lookAt(facts, settings)
  return {
    facts,
    report: after.report,
    fixed: after.report === null ? null : fixedAuditOf(after.report, after.audit!),
    look: after.look,
    change: before === null ? null : verdictChange(facts, before.look, after, settings, before.sites)
  }
}

/** A kept audit looked at again: the new look and its change, or null when the look stands and was not made under a later clock. */
export function relooked(
  kept: { facts: KeptFacts; look: KeptLook },
  lookedAt: number | null,
  settings: AuditSettings
): { look: KeptLook; change: VerdictChange | null } | null {
  const after = lookAt(kept.facts, settings)
  if (sameLook(kept.look, after.look) && (lookedAt ?? 0) <= settings.now + LOOK_CLOCK_TOLERANCE_MS) return null
  return { look: after.look, change: verdictChange(kept.facts, kept.look, after, settings) }
}
