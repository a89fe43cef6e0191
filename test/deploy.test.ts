// The alerting and the dashboard shipped in deploy/, held to the service's /metrics. promtool
// checks the rules' syntax and behaviour (scripts/check-alerting.sh); what it cannot know is
// whether the names they query exist, since a rule on a missing metric is silent, never wrong.
import { readFileSync } from 'node:fs'
import t from 'tap'
import { parse } from 'yaml'
import { VERDICTS } from '../src/vocabulary.js'
import { build } from './helper.js'
import {
  SCRAPE_SERIES,
  TARGET_LABELS,
  alertRules,
  dashboardQueries,
  queriedSeries,
  readDashboard,
  readExposition,
  RULE_TESTS_FILE
} from './deploy/queries.js'
import './deploy/containerfile.js'

const queries = [...alertRules().map((rule) => ({ where: `alert ${rule.alert}`, expr: rule.expr })), ...dashboardQueries()]

t.test('the expressions are read as intended', async (t) => {
  t.strictSame(queriedSeries('max by (site, stage) (tracer_audit_stuck_stages{job="frb-tracer"}) > 0'), {
    metrics: ['tracer_audit_stuck_stages'],
    matchers: [{ metric: 'tracer_audit_stuck_stages', matcher: { label: 'job', op: '=', value: 'frb-tracer' } }],
    grouping: ['site', 'stage']
  })
  t.strictSame(
    queriedSeries('time() - a_seconds{job="x"} > 3 * 3600 and on (job, instance) time() - b_total > 1e3').metrics,
    ['a_seconds', 'b_total']
  )
  t.strictSame(
    queriedSeries('histogram_quantile(0.95, sum by (le) (rate(h_bucket{route!="/x", i=~"$instance"}[$__rate_interval])))').metrics,
    ['h_bucket']
  )
  t.ok(queries.length >= 30, `${queries.length} queries: every rule and every panel`)
})

t.test('every metric a rule or a dashboard panel queries is one /metrics exports, with the labels it is queried by', async (t) => {
  const app = await build(t)
  // The second scrape holds the first one's request in the latency histogram, and the store
  // operations of the audit behind the gauges.
  await app.inject({ method: 'GET', url: '/metrics' })
  const response = await app.inject({ method: 'GET', url: '/metrics' })
  t.equal(response.statusCode, 200)
  const exported = readExposition(response.body)

  for (const { where, expr } of queries) {
    const { metrics, matchers, grouping } = queriedSeries(expr)
    t.ok(metrics.length > 0, `${where} queries a metric`)
    for (const metric of metrics) {
      t.ok(SCRAPE_SERIES.has(metric) || exported.has(metric), `${where}: ${metric} is exported`)
    }
    for (const { metric, matcher } of matchers) {
      if (TARGET_LABELS.has(matcher.label)) continue
      const labels = exported.get(metric)
      t.ok(labels?.has(matcher.label), `${where}: ${metric} has the label ${matcher.label}`)
      // These gauges carry every value of their label at every scrape: a value not exported is a typo.
      if (['verdict', 'stage'].includes(matcher.label) && matcher.op === '=') {
        t.ok(labels?.get(matcher.label)?.has(matcher.value), `${where}: ${metric}{${matcher.label}="${matcher.value}"} is exported`)
      }
      if (matcher.label === 'route' && !matcher.value.includes('$')) {
        t.ok(app.hasRoute({ method: 'GET', url: matcher.value }), `${where}: ${matcher.value} is a route`)
      }
    }
    const labelled = new Set(metrics.flatMap((metric) => [...(exported.get(metric)?.keys() ?? [])]))
    for (const label of grouping) {
      t.ok(TARGET_LABELS.has(label) || label === 'le' || labelled.has(label), `${where}: grouped by ${label}, a label of ${metrics.join(', ')}`)
    }
  }
  t.strictSame([...(exported.get('tracer_audit_events')?.get('verdict') ?? [])].sort(), [...VERDICTS].sort(), 'the verdicts the rules can name')
})

t.test('every alert waits, says how urgent it is and what to look at, and links to a panel of the dashboard', async (t) => {
  const dashboard = readDashboard()
  const panels = new Set(dashboard.panels.filter((panel) => panel.type !== 'row').map((panel) => panel.id))
  const rules = alertRules()
  t.ok(rules.length >= 10, `${rules.length} alerts`)
  t.equal(new Set(rules.map((rule) => rule.alert)).size, rules.length, 'each alert has a name of its own')
  for (const rule of rules) {
    t.match(rule.for, /^\d+[smh]$/, `${rule.alert} has a for:`)
    t.match(rule.labels?.severity, /^(critical|warning)$/, `${rule.alert} has a severity`)
    t.ok(rule.annotations?.summary, `${rule.alert} has a summary`)
    t.ok(rule.annotations?.description, `${rule.alert} says what to look at`)
    const link = /\/d\/([\w-]+)\/[\w-]+\?(?:.*&)?viewPanel=(\d+)$/.exec(rule.annotations?.dashboard ?? '')
    t.ok(link, `${rule.alert} links to a dashboard panel`)
    t.equal(link?.[1], dashboard.uid, `${rule.alert}: the dashboard shipped`)
    t.ok(panels.has(Number(link?.[2])), `${rule.alert}: panel ${link?.[2]} exists`)
  }
})

t.test('every alert has a promtool unit test in which it fires, and one in which it does not', async (t) => {
  interface RuleTest {
    alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[]
  }
  const tests = (parse(readFileSync(RULE_TESTS_FILE, 'utf8')) as { tests: RuleTest[] }).tests
  const cases = tests.flatMap((test) => test.alert_rule_test ?? [])
  for (const { alert } of alertRules()) {
    t.ok(cases.some((test) => test.alertname === alert && test.exp_alerts.length > 0), `${alert} fires`)
    t.ok(cases.some((test) => test.alertname === alert && test.exp_alerts.length === 0), `${alert} holds back`)
  }
})
