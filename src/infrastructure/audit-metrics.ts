import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { Gauge } from 'prom-client'
import { DAY_MS } from '../domain/time-window.js'
import { auditCounts } from '../reports/audit-counts.js'
import { VERDICTS } from '../vocabulary.js'

const WINDOW_MS = 7 * DAY_MS
const REFRESH_MS = 60_000

/** The last 7 days' audit, run only when /metrics is scraped and the last run is a minute old: no route waits for it, scrapers share a run. */
async function auditMetrics(fastify: FastifyInstance) {
  const { config, store, clock, metrics: registry, log } = fastify
  let lastRun = Number.NEGATIVE_INFINITY
  let running: Promise<void> | undefined

  const run = async () => {
    // Nothing to count while the kept audit is being rebuilt: the next scrape tries.
    if (store.keptAudit.rebuilding() !== null) return
    const now = clock()
    lastRun = now
    try {
      const counts = await auditCounts(store, { start: now - WINDOW_MS, end: now }, { sites: config.TRACER_SITES, deadlines: config.STAGE_DEADLINES, now })
      for (const verdict of VERDICTS) events.set({ verdict }, counts.verdicts[verdict])
      for (const { site, stage, count } of counts.stuckStages) stuckStages.set({ site: site ?? '', stage }, count)
      computedAt.set(now / 1000)
    } catch (error) {
      log.warn({ err: error }, 'the audit behind the /metrics gauges failed; they keep their last values')
    }
  }
  // Every gauge's collect: the first of a scrape starts the run (when due), the others wait for it.
  const refresh = async () => {
    if (running === undefined && clock() - lastRun >= REFRESH_MS) running = run().finally(() => (running = undefined))
    await running
  }

  const common = { registers: [registry], collect: refresh }
  const events = new Gauge({
    name: 'tracer_audit_events',
    help: 'Baseband events of the last 7 days by audit verdict (computed at most once a minute, when scraped).',
    labelNames: ['verdict'] as const,
    aggregator: 'max',
    ...common
  })
  const stuckStages = new Gauge({
    name: 'tracer_audit_stuck_stages',
    help: 'Stuck stages of the last 7 days’ baseband events, by site (empty for tsar_classification) and stage.',
    labelNames: ['site', 'stage'] as const,
    aggregator: 'max',
    ...common
  })
  const computedAt = new Gauge({
    name: 'tracer_audit_computed_timestamp_seconds',
    help: 'When the audit gauges were last computed, seconds since the epoch; it lags when the audit fails.',
    // The oldest: a worker whose audit fails keeps its last counts in the maxima above.
    aggregator: 'min',
    ...common
  })
}

export default fp(auditMetrics, { name: 'audit-metrics', fastify: '5.x', decorators: { fastify: ['config', 'store', 'clock'] }, dependencies: ['metrics'] })
