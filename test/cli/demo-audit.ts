import { join } from 'node:path'
import t, { type Test } from 'tap'
import { seedDemoOnFirstStart } from '../../src/bootstrap.js'
import { loadConfig } from '../../src/config.js'
import { auditEvent } from '../../src/domain/audit/audit-event.js'
import { classificationIn } from '../../src/domain/events.js'
import { keysetPages } from '../../src/store/pages.js'
import { AUDIT_RULES, VERDICTS } from '../../src/vocabulary.js'
import { DEFAULT_STAGE_DEADLINES, parseStageDeadlines } from '../../src/domain/stage-deadlines.js'
import { openSqliteStore } from '../../src/store/sqlite/store.js'
import { defaultSites } from '../sites.js'

const NOW = Date.parse('2026-03-01T12:00:00Z')
const DAY = 86_400_000

const zeros = <K extends string>(keys: readonly K[]) => Object.fromEntries(keys.map((key) => [key, 0])) as Record<K, number>

/**
 * The demo a new user gets, audited as the audit will: the first start's data set (its times are
 * relative to `now`, so any `now` gives the same findings), the default sites and deadlines.
 */
async function auditedFirstStartDemo(t: Test) {
  const config = loadConfig({ TRACER_DB: join(t.testdir(), 'tracer.sqlite') })
  // Created as a server's start creates its store: only such a store receives the demo.
  const store = openSqliteStore(config.TRACER_DB, defaultSites, { whenMissing: 'create-for-demo' })
  t.teardown(() => store.close())
  t.ok(await seedDemoOnFirstStart(store, config, () => {}, { now: NOW }), 'the demo is seeded')
  const settings = { sites: config.TRACER_SITES, deadlines: parseStageDeadlines(DEFAULT_STAGE_DEADLINES), now: NOW }

  const events = { all: 0, ...zeros(VERDICTS) }
  const lastDay = zeros(VERDICTS)
  const eventsByRule = zeros(AUDIT_RULES)
  // The classification's two kinds: classified but not in the trace, and not classified past its deadline.
  const classification = { contradicted: 0, unclassifiedStuck: 0, classifiedOnlyStuck: 0 }
  const window = { start: NOW - 31 * DAY, end: NOW }
  for await (const page of keysetPages((after, limit) => store.views.callbackPage(window, after, limit), (row) => row.position, 500)) {
    for (const { position: event } of page) {
      const parts = await store.views.eventParts(event.event_no)
      if (parts.event === null) throw new Error(`event ${event.event_no} listed but not found`)
      const audit = auditEvent({ ...parts, event: parts.event, transitions: await store.traces.history(event.event_no) }, settings)
      events.all++
      events[audit.verdict]++
      if (event.timestamp >= NOW - DAY) lastDay[audit.verdict]++
      for (const rule of new Set(audit.findings.map((found) => found.rule))) eventsByRule[rule]++
      const onClassification = new Set(audit.findings.filter((found) => found.stage === 'tsar_classification').map((found) => found.rule))
      const classified = classificationIn(parts.event.tsar_classification) !== null
      if (onClassification.has('classified-not-in-trace')) classification.contradicted++
      if (onClassification.has('stuck') && !classified) classification.unclassifiedStuck++
      if (onClassification.has('stuck') && classified && !onClassification.has('classified-not-in-trace')) classification.classifiedOnlyStuck++
    }
  }
  return { events, lastDay, eventsByRule, classification }
}

t.test('the first start demo shows every kind of audit finding, and mostly consistent events', async (t) => {
  const { events, lastDay, eventsByRule } = await auditedFirstStartDemo(t)
  t.ok(events.all > 300, `${events.all} baseband events`)
  for (const rule of AUDIT_RULES) t.ok(eventsByRule[rule] >= 3, `${rule} fires on a few events (${eventsByRule[rule]})`)
  for (const verdict of VERDICTS) t.ok(events[verdict] > 0, `some events are ${verdict} (${events[verdict]})`)
  t.ok(events.contradiction < 0.12 * events.all, `contradictions are rare (${events.contradiction} of ${events.all})`)
  t.ok(events.complete > events.stuck, `more complete than stuck (${events.complete} : ${events.stuck})`)

  // The dashboard shows the last 24 h by default: some of every verdict, the young ones in progress.
  for (const verdict of VERDICTS) t.ok(lastDay[verdict] > 0, `the last 24 h hold an event ${verdict} (${lastDay[verdict]})`)
  t.ok(lastDay.in_progress > lastDay.stuck, `recent events are mostly in progress, not stuck: ${JSON.stringify(lastDay)}`)
})

t.test('the demo holds the classification against the trace: classified but not in the trace, and unclassified and late', async (t) => {
  const { classification } = await auditedFirstStartDemo(t)
  t.ok(classification.contradicted >= 3, `classified events whose trace says the classification is incomplete (${classification.contradicted})`)
  t.ok(classification.unclassifiedStuck >= 3, `unclassified events stuck on the classification (${classification.unclassifiedStuck})`)
  t.equal(classification.classifiedOnlyStuck, 0, 'no classified event is shown merely stuck on its classification')
})
