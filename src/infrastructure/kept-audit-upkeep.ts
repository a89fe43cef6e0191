import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { Counter } from 'prom-client'

export interface KeptAuditUpkeepOptions {
  /** How often the events whose next deadline has passed are looked for. */
  deadlineCheckMs?: number
  /** How often the next page of kept audits is checked against its records. */
  verifyEveryMs?: number
}

/** Twice a second: a deadline that passes is on the live stream within 0.5 s plus the hubs' 0.25 s poll. */
export const DEADLINE_CHECK_MS = 500
/** Events whose deadline passed, settled in one transaction: a backlog (after an outage) goes on at once with the next. */
const DUE_PAGE = 500
/** A page every 10 s: a million events are all checked about every 14 hours, at a few ms of work a page. */
export const VERIFY_EVERY_MS = 10_000
const VERIFY_PAGE = 200

/**
 * Keeps the kept audit current where no write does it, and checks it: the deadline scheduler
 * looks again at every event whose next deadline has passed (the store's due index), so a stage
 * turns stuck on time and the change reaches the live stream; the verifier holds one page of kept
 * audits at a time against the audit made again from their records, in event_no order and round
 * again at the end. A mismatch (a write another program made where no change stream reached, a
 * crash between two MongoDB writes, a bug) is logged, counted in `tracer_audit_mismatches_total`
 * and repaired by the store. Each instance sharing a store runs both; a change found by two is
 * recorded once (the store settles each look in one transaction, or one conditional write).
 * Failures (the store away) are logged once until it answers again; nothing stops.
 */
async function keptAuditUpkeep(fastify: FastifyInstance, { deadlineCheckMs = DEADLINE_CHECK_MS, verifyEveryMs = VERIFY_EVERY_MS }: KeptAuditUpkeepOptions) {
  const { store, clock, log, metrics } = fastify
  const mismatches = new Counter({
    name: 'tracer_audit_mismatches_total',
    help: 'Kept audits found to differ from the audit made again from their records, each repaired when found.',
    registers: [metrics]
  })
  let stopped = false
  const timers = new Set<NodeJS.Timeout>()
  const later = (ms: number, task: () => Promise<void>) => {
    if (stopped) return
    const timer = setTimeout(() => {
      timers.delete(timer)
      void task()
    }, ms)
    timer.unref()
    timers.add(timer)
  }
  const failing = { deadlines: false, verify: false }
  const failed = (which: keyof typeof failing, error: unknown) => {
    if (failing[which]) return
    failing[which] = true
    log.warn({ err: error }, `kept audit: the ${which === 'deadlines' ? 'deadline check' : 'verification'} cannot read the store; trying again`)
  }
  const recovered = (which: keyof typeof failing) => {
    if (!failing[which]) return
    failing[which] = false
    log.info(`kept audit: the ${which === 'deadlines' ? 'deadline check' : 'verification'} reads the store again`)
  }

  const checkDeadlines = async () => {
    let full = false
    try {
      const now = clock()
      const due = await store.audits.due(now, DUE_PAGE)
      if (due.length > 0) await store.audits.settle(due, now)
      full = due.length === DUE_PAGE
      recovered('deadlines')
    } catch (error) {
      failed('deadlines', error)
    }
    later(full ? 0 : deadlineCheckMs, checkDeadlines)
  }

  let verifiedUpTo = -1
  const verify = async () => {
    try {
      const result = await store.audits.verify(verifiedUpTo, VERIFY_PAGE, clock())
      verifiedUpTo = result.last ?? -1
      for (const mismatch of result.mismatches) {
        log.warn(
          { event_no: mismatch.event_no, kept: mismatch.kept, recomputed: mismatch.recomputed },
          `kept audit: event ${mismatch.event_no} differed from its records; repaired`
        )
      }
      mismatches.inc(result.mismatches.length)
      recovered('verify')
    } catch (error) {
      failed('verify', error)
    }
    later(verifyEveryMs, verify)
  }

  fastify.addHook('onReady', async () => {
    later(0, checkDeadlines)
    later(verifyEveryMs, verify)
  })
  fastify.addHook('onClose', async () => {
    stopped = true
    for (const timer of timers) clearTimeout(timer)
  })
}

export default fp(keptAuditUpkeep, {
  name: 'kept-audit-upkeep',
  fastify: '5.x',
  decorators: { fastify: ['store', 'clock', 'metrics'] },
  dependencies: ['metrics']
})
