import type { AuditSummary } from '../../schemas/audit.js'
import type { AuditSettings } from '../domain/audit/audit-event.js'
import { WindowAudit } from '../domain/audit/window-audit.js'
import type { TimeWindow } from '../domain/time-window.js'
import type { Store } from '../store/port.js'
import { CLASSIFICATION_STAGE, STAGES, type PipelineStage } from '../vocabulary.js'
import { keptWindow } from './kept-window.js'

export interface StuckStageCount {
  /** Null for the classification. */
  site: string | null
  stage: PipelineStage
  count: number
}

export interface AuditCounts {
  verdicts: AuditSummary
  /** Every audited stage at every configured site (the classification once), stuck or not. */
  stuckStages: StuckStageCount[]
}

/** The audit of a window as counts: events by verdict, and stuck findings by site and stage. One page held at a time. */
export async function auditCounts(store: Store, window: TimeWindow, settings: AuditSettings): Promise<AuditCounts> {
  const audit = new WindowAudit(settings)
  const stuck = new Map<string, number>()
  const key = (site: string | null, stage: string) => `${site ?? ''}/${stage}`
  for await (const events of audit.pages(keptWindow(store, window))) {
    // A fixed audit (text) has no stage pending, so nothing stuck to count.
    for (const event of events) {
      if (typeof event === 'string') continue
      for (const found of event.findings) {
        if (found.rule === 'stuck') stuck.set(key(found.site, found.stage!), (stuck.get(key(found.site, found.stage!)) ?? 0) + 1)
      }
    }
  }
  const stages: Omit<StuckStageCount, 'count'>[] = [
    { site: null, stage: CLASSIFICATION_STAGE },
    ...settings.sites.names.flatMap((site) => STAGES.map((stage) => ({ site, stage })))
  ]
  return {
    verdicts: audit.summary,
    stuckStages: stages.map(({ site, stage }) => ({ site, stage, count: stuck.get(key(site, stage)) ?? 0 }))
  }
}
