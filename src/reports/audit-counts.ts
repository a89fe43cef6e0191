import type { AuditSummary } from '../../schemas/audit.js'
import type { AuditSettings } from '../domain/audit/audit-event.js'
import { WindowAudit } from '../domain/audit/window-audit.js'
import type { TimeWindow } from '../domain/time-window.js'
import type { Store } from '../store/port.js'
import { CLASSIFICATION_STAGE, STAGES, type PipelineStage } from '../vocabulary.js'
import { keptWindow } from './kept-window.js'

type StuckStage = { site: string | null; stage: PipelineStage }
type AuditCounts = { verdicts: AuditSummary; stuckStages: (StuckStage & { count: number })[] }

/** Events by verdict, and stuck findings at every audited stage of every site (the classification, site null, once). */
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
  const stages: StuckStage[] = [
    { site: null, stage: CLASSIFICATION_STAGE },
    ...settings.sites.names.flatMap((site) => STAGES.map((stage) => ({ site, stage })))
  ]
  return {
    verdicts: audit.summary,
    stuckStages: stages.map(({ site, stage }) => ({ site, stage, count: stuck.get(key(site, stage)) ?? 0 }))
  }
}
