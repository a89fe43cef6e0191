// The shipped alerting, live: Debian's Prometheus scrapes `tracer serve`, evaluates
// deploy/prometheus/frb-tracer.rules.yml and sends to Debian's Alertmanager, routed by
// deploy/alertmanager/alertmanager.yml to its receivers, whose webhooks are this test. An event is
// left to pass its deadline, and the stuck alert must arrive at the receiver of its severity.
// Everything listens on 127.0.0.1 only, keeps its data in the test's folder, and is killed with
// its process group however the test ends.
import type { ChildProcess } from 'node:child_process'
import { accessSync, constants, readFileSync, writeFileSync } from 'node:fs'
import { createServer, type IncomingMessage } from 'node:http'
import { once } from 'node:events'
import { delimiter, join } from 'node:path'
import t, { type Test } from 'tap'
import { parse, stringify } from 'yaml'
import { end, spawnOwned } from '../owned-processes.js'
import { ALERTMANAGER_FILE, alertRules, readRules } from '../deploy/queries.js'
import { closedPort, request, runCli, startServer, waitFor } from './processes.js'

/** The rules ship with for: of minutes; the live copy waits this long, so that the test takes seconds. */
const LIVE_FOR = '3s'
/** Alertmanager ships waiting seconds to minutes before it sends a group; the live copy waits this long. */
const LIVE_WAIT = '1s'
const DEADLINE_S = 2

/** The first of `names` on PATH that can be run, or undefined. */
function onPath(...names: string[]): string | undefined {
  for (const name of names) {
    for (const folder of (process.env.PATH ?? '').split(delimiter)) {
      try {
        accessSync(join(folder, name), constants.X_OK)
        return join(folder, name)
      } catch {
        // not in this folder
      }
    }
  }
  return undefined
}

const prometheus = onPath('prometheus')
const alertmanager = onPath('prometheus-alertmanager', 'alertmanager')
const missing = prometheus === undefined || alertmanager === undefined

/** Starts a program in a group of its own, killed when the test ends; its output is kept for a failure's message. */
function spawnTool(t: Test, command: string, args: string[]): { child: ChildProcess; log: () => string } {
  const child = spawnOwned(command, args, { env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] })
  t.teardown(() => end(child))
  let log = ''
  const keep = (chunk: Buffer) => (log = (log + chunk.toString()).slice(-4000))
  child.stdout!.on('data', keep)
  child.stderr!.on('data', keep)
  return { child, log: () => log }
}

async function ready(url: string, tool: { child: ChildProcess; log: () => string }) {
  try {
    await waitFor(async () => {
      if (tool.child.exitCode !== null) throw new Error(`it exited (${tool.child.exitCode})`)
      return (await fetch(url).catch(() => undefined))?.ok === true
    }, 20_000)
  } catch (error) {
    throw new Error(`${url} never answered: ${(error as Error).message}\n${tool.log()}`)
  }
}

/** What Prometheus's API says of its rules and its alerts (/api/v1/rules, /api/v1/alerts). */
interface LoadedRules {
  groups: { rules: { name: string; health: string; lastError?: string }[] }[]
}
interface ActiveAlerts {
  alerts: { labels: { alertname: string }; state: string }[]
}

interface DeliveredAlert {
  status: string
  labels: Record<string, string>
  annotations: Record<string, string>
}
/** One webhook call of Alertmanager: a group of alerts, sent to one receiver. */
interface Notification {
  receiver: string
  groupLabels: Record<string, string>
  alerts: DeliveredAlert[]
}

/** A route of an Alertmanager configuration, and its child routes. */
interface Route {
  receiver?: string
  group_wait?: string
  group_interval?: string
  routes?: Route[]
}
interface AlertmanagerConfig {
  route: Route
  receivers: { name: string; webhook_configs?: { url: string; send_resolved?: boolean }[] }[]
}

/**
 * The shipped Alertmanager configuration, its routes and grouping as they are, but each receiver a
 * webhook of this test at /receiver-name, and a group sent a second after its first alert.
 */
function liveAlertmanagerConfig(webhook: string): AlertmanagerConfig {
  const config = parse(readFileSync(ALERTMANAGER_FILE, 'utf8')) as AlertmanagerConfig
  const quicken = (route: Route) => {
    if (route.group_wait !== undefined) route.group_wait = LIVE_WAIT
    if (route.group_interval !== undefined) route.group_interval = LIVE_WAIT
    for (const child of route.routes ?? []) quicken(child)
  }
  quicken(Object.assign(config.route, { group_wait: LIVE_WAIT, group_interval: LIVE_WAIT }))
  for (const receiver of config.receivers) receiver.webhook_configs = [{ url: `${webhook}/${receiver.name}`, send_resolved: false }]
  return config
}

t.test('a stuck event reaches the ticket receiver, grouped by site, through Prometheus, the shipped rules and the shipped Alertmanager routes', { skip: missing && 'prometheus and prometheus-alertmanager (Debian packages) are not installed' }, async (t) => {
  const dir = t.testdir()

  // The receivers: every notification Alertmanager sends, in order, with the path it was sent to.
  const notifications: (Notification & { path: string })[] = []
  const receiver = createServer((incoming: IncomingMessage, reply) => {
    let body = ''
    incoming.on('data', (chunk) => (body += chunk))
    incoming.on('end', () => {
      notifications.push({ ...(JSON.parse(body) as Notification), path: incoming.url ?? '' })
      reply.end()
    })
  }).listen(0, '127.0.0.1')
  t.teardown(() => receiver.close())
  await once(receiver, 'listening')
  const webhook = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`
  const delivered = () => notifications.flatMap((notification) => notification.alerts)

  // The service, whose callback requests are due 2 s after their event, with two workers: each
  // scrape is both workers' metrics merged, and no rule may read that as anything to alert on.
  const env = { TRACER_DB: join(dir, 'tracer.sqlite'), STAGE_DEADLINES: `baseband_callback_request=${DEADLINE_S}s`, WORKERS: '2' }
  const added = await runCli(['users', 'add', 'pipeline', '--role', 'writer', '--password-stdin'], env, 'pipeline-password\n')
  t.equal(added.status, 0, added.stderr)
  const service = await startServer(t, env)
  const login = await request(`${service.url}/auth`, { body: { username: 'pipeline', password: 'pipeline-password' } })
  const token = login.body.access_token as string
  const posted = await request(`${service.url}/v1/events`, {
    token,
    body: [{ event_no: 4242, timestamp_utc: new Date().toISOString(), snr: 25, known_source_name: 'EXT', actions: { want: { baseband: true }, got: {} } }]
  })
  t.equal(posted.status, 200, JSON.stringify(posted.body))
  // Stuck before the first scrape: the gauges are computed at most once a minute, when scraped.
  await waitFor(async () => (await request(`${service.url}/v1/event-tracer/audit/4242`, { token })).body.verdict === 'stuck', 15_000)

  // The shipped rules, each for: shortened to LIVE_FOR; nothing else changed.
  const rules = readRules()
  for (const group of rules.groups) for (const rule of group.rules) rule.for = LIVE_FOR
  writeFileSync(join(dir, 'rules.yml'), stringify(rules))

  const [amPort, promPort] = [await closedPort(), await closedPort()]
  writeFileSync(join(dir, 'alertmanager.yml'), stringify(liveAlertmanagerConfig(webhook)))
  const am = spawnTool(t, alertmanager!, [
    `--config.file=${join(dir, 'alertmanager.yml')}`,
    `--storage.path=${join(dir, 'alertmanager')}`,
    `--web.listen-address=127.0.0.1:${amPort}`,
    // No cluster: it would listen on every interface.
    '--cluster.listen-address='
  ])
  await ready(`http://127.0.0.1:${amPort}/-/ready`, am)

  writeFileSync(
    join(dir, 'prometheus.yml'),
    stringify({
      global: { scrape_interval: '1s', evaluation_interval: '1s' },
      rule_files: [join(dir, 'rules.yml')],
      alerting: { alertmanagers: [{ static_configs: [{ targets: [`127.0.0.1:${amPort}`] }] }] },
      scrape_configs: [{ job_name: 'frb-tracer', static_configs: [{ targets: [new URL(service.url).host] }] }]
    })
  )
  const prom = spawnTool(t, prometheus!, [
    `--config.file=${join(dir, 'prometheus.yml')}`,
    `--storage.tsdb.path=${join(dir, 'prometheus')}`,
    `--web.listen-address=127.0.0.1:${promPort}`
  ])
  await ready(`http://127.0.0.1:${promPort}/-/ready`, prom)

  const stuck = () => notifications.find((notification) => notification.alerts.some((alert) => alert.labels.alertname === 'TracerEventsStuck'))
  try {
    await waitFor(async () => stuck() !== undefined, 30_000)
  } catch {
    const alerts = await (await fetch(`http://127.0.0.1:${promPort}/api/v1/alerts`)).text()
    const targets = await (await fetch(`http://127.0.0.1:${promPort}/api/v1/targets`)).text()
    t.fail(`no stuck alert delivered within 30 s\nPrometheus's alerts: ${alerts}\ntargets: ${targets}\n${prom.log()}\n${am.log()}`)
    return
  }
  // A warning goes to the ticket receiver, in the group of its site.
  t.match(stuck(), { path: '/tickets', receiver: 'tickets', groupLabels: { site: 'chime' } }, 'routed by severity, grouped by site')
  t.strictSame(Object.keys(stuck()!.groupLabels), ['site'], 'by nothing else')
  t.match(stuck()!.alerts, [
    {
      status: 'firing',
      labels: { alertname: 'TracerEventsStuck', severity: 'warning', site: 'chime', stage: 'baseband_callback_request' },
      annotations: {
        summary: '1 stuck baseband_callback_request at chime in the last 7 days',
        dashboard: /\/d\/frb-tracer\/frb-tracer\?viewPanel=2$/
      }
    }
  ])
  t.strictSame([...new Set(delivered().map((alert) => alert.labels.alertname))], ['TracerEventsStuck'], 'no other alert delivered')

  // Every shipped rule was loaded and evaluates without error on the live series, and nothing else
  // is pending or firing on a healthy service (every rule waited the same short for:).
  const api = async <T>(path: string) => ((await (await fetch(`http://127.0.0.1:${promPort}/api/v1/${path}`)).json()) as { data: T }).data
  const loaded = (await api<LoadedRules>('rules')).groups.flatMap((group) => group.rules)
  t.strictSame(loaded.map((rule) => rule.name), alertRules().map((rule) => rule.alert), 'every shipped rule is loaded')
  for (const rule of loaded) t.equal(rule.health, 'ok', `${rule.name} evaluates${rule.lastError ? `: ${rule.lastError}` : ''}`)
  const active = (await api<ActiveAlerts>('alerts')).alerts.map((alert) => `${alert.labels.alertname} ${alert.state}`)
  t.strictSame(active, ['TracerEventsStuck firing'], 'and no other alert is pending or firing')
})
