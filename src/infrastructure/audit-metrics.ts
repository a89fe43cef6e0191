import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { Gauge } from 'prom-client'
import { DAY_MS } from '../domain/time-window.js'
import { auditCounts } from '../reports/audit-counts.js'
import { VERDICTS } from '../vocabulary.js'

/** The gauges show the audit of this many days up to now. */
const WINDOW_MS = 7 * DAY_MS
/** A scrape within this long of the last audit reads that audit's numbers instead of running another. */
const REFRESH_MS = 60_000

/**
 * Gauges of the last 7 days' audit: events by verdict, and stuck stages by site and stage. The
 * audit runs only when /metrics is scraped (prom-client's `collect`) and the last run is a minute
 * old or more, so no other route ever waits for it and scrapers share one run a minute. A run
 * that fails (the store is away) is logged; the gauges keep their last values until one succeeds, and
 * none runs while the kept audit is being rebuilt.
 */
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
  /** Every gauge's collect calls this: the first of a scrape starts the run (when due), the others wait for the same. */
  const refresh = async () => {
    if (running === undefined && clock() - lastRun >= REFRESH_MS) running = run().finally(() => (running = undefined))
    await running
  }

  const events = new Gauge({
    name: 'tracer_audit_events',
    help: 'Baseband events of the last 7 days by audit verdict (computed at most once a minute, when scraped).',
    labelNames: ['verdict'] as const,
    registers: [registry],
    aggregator: 'max',
    collect: refresh
  })
  const stuckStages = new Gauge({
    name: 'tracer_audit_stuck_stages',
    help: 'Stuck stages of the last 7 days’ baseband events, by site (empty for tsar_classification) and stage.',
    labelNames: ['site', 'stage'] as const,
    registers: [registry],
    aggregator: 'max',
    collect: refresh
  })
  const computedAt = new Gauge({
    name: 'tracer_audit_computed_timestamp_seconds',
    help: 'When the audit gauges were last computed, seconds since the epoch; it lags when the audit fails.',
    registers: [registry],
    // The oldest: a worker whose audit fails keeps its last counts in the maxima above.
    aggregator: 'min',
    collect: refresh
  })
}

export default fp(auditMetrics, {
  name: 'audit-metrics',
  fastify: '5.x',
  decorators: { fastify: ['config', 'store', 'clock'] },
  dependencies: ['metrics']
})
