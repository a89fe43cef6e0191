import type Database from 'better-sqlite3'
import type { RebuildProgress } from '../port.js'

/**
 * A rebuild under way, as the settings table holds it (`kept_audit_rebuild`), updated in the
 * transaction of each batch: the signatures it makes the audit under, what it makes again, and the
 * last event number done. A process killed between batches leaves it there, and the next start
 * goes on after that event.
 */
export interface Plan extends RebuildProgress {
  facts: string
  looks: string
  what: 'facts' | 'looks'
  /** No kept audit was there before (a store's first): nothing to say when it is made. */
  first: boolean
  after: number
}

export const PLAN = 'kept_audit_rebuild'

export const readPlan = (text: string | undefined): Plan | undefined => {
  if (text === undefined) return undefined
  try {
    const plan = JSON.parse(text) as Partial<Plan> | null
    return typeof plan?.after === 'number' && (plan.what === 'facts' || plan.what === 'looks') ? (plan as Plan) : undefined
  } catch {
    return undefined
  }
}

/**
 * Where an unfinished rebuild of the facts stands, read in the caller's transaction: a write of an
 * event past it makes that event's facts from its records, since its kept ones were made under
 * other settings. Undefined when no such rebuild is under way.
 */
export function factsRebuiltUpTo(db: Database.Database): () => number | undefined {
  const read = db.prepare<[], string>(`SELECT value FROM settings WHERE name = '${PLAN}'`).pluck()
  return () => {
    const plan = readPlan(read.get())
    return plan?.what === 'facts' ? plan.after : undefined
  }
}

