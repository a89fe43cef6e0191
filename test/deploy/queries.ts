import { readFileSync } from 'node:fs'
import { parse } from 'yaml'

/** The alerting and the dashboard shipped for operators (deploy/README.md). */
export const RULES_FILE = 'deploy/prometheus/frb-tracer.rules.yml'
export const RULE_TESTS_FILE = 'deploy/prometheus/frb-tracer.rules.test.yml'
export const DASHBOARD_FILE = 'deploy/grafana/frb-tracer.json'
export const ALERTMANAGER_FILE = 'deploy/alertmanager/alertmanager.yml'

export interface AlertRule {
  alert: string
  expr: string
  for?: string
  labels?: Record<string, string>
  annotations?: Record<string, string>
}

export interface RuleFile {
  groups: { name: string; rules: AlertRule[] }[]
}

export const readRules = (path = RULES_FILE) => parse(readFileSync(path, 'utf8')) as RuleFile
export const alertRules = (rules = readRules()) => rules.groups.flatMap((group) => group.rules)

interface DashboardPanel {
  id: number
  type: string
  title: string
  targets?: { expr: string }[]
}

export interface Dashboard {
  uid: string
  panels: DashboardPanel[]
  templating: { list: { name: string; query?: string | { query: string } }[] }
}

export const readDashboard = () => JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as Dashboard

/** Every query a panel or a variable of the dashboard sends to Prometheus, with where it is. */
export function dashboardQueries(dashboard = readDashboard()): { where: string; expr: string }[] {
  const panels = dashboard.panels.flatMap((panel) => (panel.targets ?? []).map(({ expr }) => ({ where: `panel ${panel.id} "${panel.title}"`, expr })))
  const variables = dashboard.templating.list.flatMap(({ name, query }) => {
    const text = typeof query === 'string' ? query : query?.query
    // A datasource variable's query is the kind of data source, not PromQL.
    if (text === undefined || text === 'prometheus') return []
    // label_values(selector, label): the selector is the query; the label is no metric.
    return [{ where: `variable ${name}`, expr: text.replace(/^label_values\((.*),\s*\w+\)$/s, '$1') }]
  })
  return [...panels, ...variables]
}

export interface Matcher {
  label: string
  op: '=' | '!=' | '=~' | '!~'
  value: string
}

export interface QueriedSeries {
  /** The metric names the expression selects. */
  metrics: string[]
  /** The label matchers written after each metric name. */
  matchers: { metric: string; matcher: Matcher }[]
  /** The labels of by (...), without (...), on (...), ignoring (...) and group_left/right (...). */
  grouping: string[]
}

const IDENTIFIER = /(?<![\w.:])[a-zA-Z_:][\w:]*/g
/** Words of PromQL that are no metric when not followed by "(" (functions and aggregations are). */
const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset', 'inf', 'nan'])

/**
 * The metrics, matchers and grouping labels of a PromQL expression, read with a few regular
 * expressions: enough for the queries shipped here (no strings outside matchers, no nested braces).
 * Grafana's interval variables read as a duration; its other variables only appear in matcher values.
 */
export function queriedSeries(expression: string): QueriedSeries {
  let rest = expression.replace(/\$__\w+/g, '5m')
  const metrics: string[] = []
  const matchers: QueriedSeries['matchers'] = []
  const grouping: string[] = []
  rest = rest.replace(/([a-zA-Z_:][\w:]*)?\s*\{([^}]*)\}/g, (_whole, name: string | undefined, inside: string) => {
    if (name === undefined) throw new Error(`a selector without a metric name in ${expression}`)
    metrics.push(name)
    for (const [, label, op, value] of inside.matchAll(/(\w+)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"/g)) {
      matchers.push({ metric: name, matcher: { label: label!, op: op as Matcher['op'], value: value! } })
    }
    return ' '
  })
  rest = rest.replace(/\[[^\]]*\]/g, ' ')
  rest = rest.replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g, (_whole, _word, labels: string) => {
    grouping.push(...labels.split(',').map((label) => label.trim()).filter((label) => label !== ''))
    return ' '
  })
  for (const found of rest.matchAll(IDENTIFIER)) {
    const after = rest.slice(found.index + found[0].length).trimStart()
    if (after.startsWith('(') || KEYWORDS.has(found[0])) continue
    metrics.push(found[0])
  }
  return { metrics, matchers, grouping }
}

/** What a scrape of /metrics holds: the sample names with the labels and values each carries. */
export type Exposition = Map<string, Map<string, Set<string>>>

/**
 * Reads Prometheus's text format. A histogram is exported as its _bucket, _sum and _count series
 * (a summary as itself, _sum and _count), so a histogram with no observation yet still counts.
 */
export function readExposition(text: string): Exposition {
  const exposition: Exposition = new Map()
  const series = (name: string) => {
    let labels = exposition.get(name)
    if (labels === undefined) exposition.set(name, (labels = new Map()))
    return labels
  }
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line)
    if (type !== null) {
      const [, name, kind] = type as unknown as [string, string, string]
      const suffixes = kind === 'histogram' ? ['_bucket', '_sum', '_count'] : kind === 'summary' ? ['', '_sum', '_count'] : ['']
      for (const suffix of suffixes) series(name + suffix)
      continue
    }
    if (line === '' || line.startsWith('#')) continue
    const sample = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s/.exec(line)
    if (sample === null) throw new Error(`not a sample: ${line}`)
    const labels = series(sample[1]!)
    for (const [, label, value] of (sample[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
      let values = labels.get(label!)
      if (values === undefined) labels.set(label!, (values = new Set()))
      values.add(value!)
    }
  }
  return exposition
}

/** Series Prometheus makes for every target itself, and the labels it adds to every sample. */
export const SCRAPE_SERIES = new Set(['up', 'scrape_duration_seconds'])
export const TARGET_LABELS = new Set(['job', 'instance'])
