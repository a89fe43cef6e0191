import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { performance } from 'node:perf_hooks'
import { Counter, Gauge } from 'prom-client'
import type { AuditCheck } from './keeper.js'

/** The constants below unless given; `verifyPassMs` 0 spaces no pass, `verifyYieldMs` 0 never gives way. */
export interface KeptAuditUpkeepOptions {
  deadlineCheckMs?: number
  /** The shortest time between two pages of the verifier. */
  verifyEveryMs?: number
  verifyPassMs?: number
  verifyPage?: number
  marksCheckMs?: number
  verifyYieldMs?: number
  /** Every how many passes of the verifier hold the output texts and baseband flag too. */
  verifyTextsEvery?: number
  busy?: () => boolean
}

/** Twice a second: a deadline that passes is on the live stream within 0.5 s plus the hubs' 0.25 s poll. */
export const DEADLINE_CHECK_MS = 500
/** Events whose deadline passed, settled together: a backlog (after an outage) goes on at once with the next. */
const DUE_PAGE = 500
/** Pages of 50, at most one every 160 ms: a million kept audits within the hour (the promise to operators). */
export const VERIFY_EVERY_MS = 160
export const VERIFY_PAGE = 50
export const VERIFY_PASS_MS = 45 * 60_000
/** The longest wait between two pages, so a pass over a few rows still ends soon. */
const VERIFY_SLOWEST_MS = 2_000
/** How far behind schedule a pass may fall by giving way; caught up at the fastest pace, it still ends within the hour. */
export const VERIFY_YIELD_MS = 5 * 60_000
/**
 * The output texts and baseband flag of every event in one pass of eight (about six hours apart at the usual pace), from the
 * second after a start: another program's edit of one is marked and repaired within a second (MARKS_CHECK_MS), also one made
 * while the service was stopped; the pass finds edits no trigger saw, and at every pass it would be most of the verifier's
 * cost (docs/performance.md). Not the first: a start has its rebuilds and catching up to do.
 */
export const VERIFY_TEXTS_EVERY = 8
/** The event loop's busy share since the last look above which the verifier gives way to requests. */
const BUSY_UTILIZATION = 0.5

/** Whether the event loop was busy more than BUSY_UTILIZATION of the time since the last call. */
export function loopBusy(totals: () => { active: number; idle: number } = () => performance.eventLoopUtilization()): () => boolean {
  let last = totals()
  return () => {
    const now = totals()
    const active = now.active - last.active
    const idle = now.idle - last.idle
    last = now
    return active > BUSY_UTILIZATION * (active + idle)
  }
}

/** Once a second: a write another program made is in the kept audit within about a second. */
export const MARKS_CHECK_MS = 1000
const MARKS_PAGE = 500
/** Events whose records could not be read, remembered so that each is logged once, not at every pass. */
const UNREADABLE_REMEMBERED = 10_000

/**
 * Keeps the kept audit current where no write does it (README.md): the deadline check looks again at events whose deadline
 * passed or whose look a clock step left ahead; the verifier holds every row, round and round, to what its records make,
 * giving way while the loop is busy (docs/performance.md). A failing store is logged once until it answers.
 */
async function keptAuditUpkeep(
  fastify: FastifyInstance,
  {
    deadlineCheckMs = DEADLINE_CHECK_MS,
    verifyEveryMs = VERIFY_EVERY_MS,
    verifyPage = VERIFY_PAGE,
    verifyPassMs = VERIFY_PASS_MS,
    marksCheckMs = MARKS_CHECK_MS,
    verifyYieldMs = VERIFY_YIELD_MS,
    verifyTextsEvery = VERIFY_TEXTS_EVERY,
    busy = loopBusy()
  }: KeptAuditUpkeepOptions
) {
  const { store, clock, log, metrics } = fastify
  const gauges = upkeepMetrics(metrics)
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
  const failing = { deadlines: false, verify: false, marks: false }
  const what = { deadlines: 'deadline check', verify: 'verification', marks: 'check of other programs’ writes' }
  const failed = (which: keyof typeof failing, error: unknown) => {
    if (failing[which]) return
    failing[which] = true
    log.warn({ err: error }, `kept audit: the ${what[which]} cannot read the store; trying again`)
  }
  const recovered = (which: keyof typeof failing) => {
    if (!failing[which]) return
    failing[which] = false
    log.info(`kept audit: the ${what[which]} reads the store again`)
  }

  const unreadableLogged = new Set<number>()
  const reportUnreadable = (unreadable: AuditCheck['unreadable']) => {
    for (const { event_no, error } of unreadable) {
      if (unreadableLogged.has(event_no)) continue
      if (unreadableLogged.size >= UNREADABLE_REMEMBERED) unreadableLogged.clear()
      unreadableLogged.add(event_no)
      gauges.unreadable.inc()
      log.error({ event_no, error }, `kept audit: the records of event ${event_no} cannot be read; its audit is not checked until they are written again`)
    }
  }
  const reportColumns = (columns: AuditCheck['columns']) => {
    for (const { event_no, column } of columns) log.warn({ event_no, column }, `kept audit: the kept ${column} of event ${event_no} differed from its records; repaired`)
    gauges.mismatches.inc(columns.length)
  }
  const report = ({ mismatches, unreadable, columns }: AuditCheck) => {
    reportColumns(columns)
    for (const mismatch of mismatches) {
      log.warn(
        { event_no: mismatch.event_no, parts: mismatch.parts, kept: mismatch.kept, recomputed: mismatch.recomputed },
        `kept audit: event ${mismatch.event_no} differed from its records (${mismatch.parts.join(', ')}); repaired`
      )
    }
    gauges.mismatches.inc(mismatches.length)
    reportUnreadable(unreadable)
  }

  const checkDeadlines = async () => {
    let full = false
    try {
      const now = clock()
      const due = await store.audits.due(now, DUE_PAGE)
      const unreadable: number[] = []
      if (due.length > 0) await store.audits.settle(due, now, (eventNo) => unreadable.push(eventNo))
      if (unreadable.length > 0) report(await store.audits.check(unreadable, now))
      full = due.length === DUE_PAGE
      recovered('deadlines')
    } catch (error) {
      failed('deadlines', error)
    }
    later(full ? 0 : deadlineCheckMs, checkDeadlines)
  }

  let verifiedUpTo = -1
  let checkedThisPass = 0
  let pageEveryMs = verifyEveryMs
  // The schedule of the pass under way, on the monotonic clock: page n is due n pages after its start.
  const pass = { begun: false, startedAt: 0, pages: 0, number: 0 }
  // Passes are numbered from 0: the texts at pass 1, then every verifyTextsEvery passes (at each pass when it is 1).
  const holdsTexts = (passNumber: number) => passNumber % verifyTextsEvery === 1 % verifyTextsEvery
  const behindMs = () => performance.now() - (pass.startedAt + pass.pages * pageEveryMs)
  const verify = async () => {
    let loopWasBusy = false
    try {
      if (!pass.begun) {
        // Each pass is spaced by the store's size as it begins: a pass in verifyPassMs, within the bounds.
        if (verifyPassMs > 0) {
          const spaced = (verifyPassMs * verifyPage) / Math.max(1, await store.audits.size())
          pageEveryMs = Math.min(Math.max(verifyEveryMs, VERIFY_SLOWEST_MS), Math.max(verifyEveryMs, spaced))
        }
        Object.assign(pass, { begun: true, startedAt: performance.now(), pages: 0 })
      }
      loopWasBusy = busy()
      if (verifyYieldMs > 0 && loopWasBusy && behindMs() < verifyYieldMs) {
        later(pageEveryMs, verify)
        return
      }
      const result = await store.audits.verify(verifiedUpTo, verifyPage, clock(), { texts: holdsTexts(pass.number) })
      pass.pages++
      report(result)
      checkedThisPass += result.checked
      gauges.passRows.set(checkedThisPass)
      if (result.last === null) {
        gauges.lastPassEnded.set(clock() / 1000)
        gauges.lastPassRows.set(checkedThisPass)
        checkedThisPass = 0
        verifiedUpTo = -1
        pass.begun = false
        pass.number++
      } else {
        verifiedUpTo = result.last
      }
      recovered('verify')
    } catch (error) {
      failed('verify', error)
    }
    // Behind its schedule with the loop free: the pages put off are made up at the fastest pace.
    later(!loopWasBusy && behindMs() > 0 ? verifyEveryMs : pageEveryMs, verify)
  }

  // Another program's write (an older version, a script) is expected, not a fault of the kept audit:
  // counted apart from the mismatches.
  const checkMarked = async () => {
    let full = false
    try {
      const { eventNos, upTo } = await store.audits.marked(MARKS_PAGE)
      if (eventNos.length > 0) {
        const { mismatches, unreadable, columns } = await store.audits.check(eventNos, clock())
        await store.audits.unmark(upTo)
        for (const { event_no, parts } of mismatches) log.info({ event_no, parts }, `kept audit: event ${event_no} brought up to date after a write another program made`)
        gauges.foreignWrites.inc(mismatches.length)
        // A kept column is the service's alone: another program's write that left it differing is a mismatch like any.
        reportColumns(columns)
        reportUnreadable(unreadable)
      }
      full = eventNos.length === MARKS_PAGE
      recovered('marks')
    } catch (error) {
      failed('marks', error)
    }
    later(full ? 0 : marksCheckMs, checkMarked)
  }

  // The rows a rebuild has not reached yet were made under other settings.
  fastify.addHook('onReady', async () => {
    void store.keptAudit.made.then(() => {
      later(0, checkDeadlines)
      later(0, checkMarked)
      later(verifyEveryMs, verify)
    })
  })
  fastify.addHook('onClose', async () => {
    stopped = true
    for (const timer of timers) clearTimeout(timer)
  })
}

function upkeepMetrics(registers: FastifyInstance['metrics']) {
  const counter = (name: string, help: string) => new Counter({ name, help, registers: [registers] })
  const gauge = (name: string, help: string, aggregator: 'min' | 'max') => new Gauge({ name, help, registers: [registers], aggregator })
  return {
    mismatches: counter(
      'tracer_audit_mismatches_total',
      'Kept audits (and kept heartbeat counts, on SQLite) found to differ, in any part a read serves, from what their records make; each repaired when found.'
    ),
    unreadable: counter(
      'tracer_audit_unreadable_events_total',
      'Events whose records could not be read to check their kept audit (each counted once per process).'
    ),
    foreignWrites: counter(
      'tracer_audit_foreign_writes_total',
      'Kept audits brought up to date after writes that another program (or an older version) made straight into the store.'
    ),
    // Each worker runs its own verifier: the one furthest behind is the one that may have stalled.
    lastPassEnded: gauge(
      'tracer_audit_verify_last_pass_end_timestamp_seconds',
      'When this instance last finished checking every kept audit against its records, seconds since the epoch; 0 until its first pass ends.',
      'min'
    ),
    lastPassRows: gauge('tracer_audit_verify_last_pass_rows', 'Kept audits (and events in the audit) checked by the last full pass of this instance.', 'max'),
    passRows: gauge('tracer_audit_verify_pass_rows', 'Kept audits checked so far by the pass under way.', 'min')
  }
}

export default fp(keptAuditUpkeep, {
  name: 'kept-audit-upkeep',
  fastify: '5.x',
  decorators: { fastify: ['store', 'clock', 'metrics'] },
  dependencies: ['metrics']
})
