import { readFileSync } from 'node:fs'
import t from 'tap'
import { serverOptions } from '../../src/app.js'
import { ConfigSchema, loadConfig } from '../../src/config.js'
import { serveNodeOptions } from '../../src/package-info.js'
import { AUDIT_RULES } from '../../src/vocabulary.js'

const readme = readFileSync('README.md', 'utf8')
/** The pages the README sends each audience to (docs/). */
const page = (name: string) => readFileSync(`docs/${name}.md`, 'utf8')
const configuration = page('configuration')
const integrators = page('integrators')
const audit = page('audit')
const scripts = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts

t.test('the configuration page documents every configuration variable', async (t) => {
  for (const name of Object.keys(ConfigSchema.properties)) {
    t.match(configuration, new RegExp('^\\| `' + name + '` \\|', 'm'), name)
  }
})

t.test('the set-up commands of the README exist, and npm start runs what the process tests run', async (t) => {
  t.match(readme, 'npm install && npm start')
  t.match(readme, 'npm install && npm test')
  // exec: the server replaces the shell, so a signal to npm reaches it and leaves nothing behind.
  t.match(scripts.start, /&& ([A-Z_]+=\S+ )*exec node (--\S+ )*dist\/src\/cli\.js serve$/)
  t.ok(serveNodeOptions.length > 0, 'the process tests read the node options from it')
  // Issue 13: memory stays low by loading less, not by heap caps, which cost about 10% of throughput.
  t.notOk(serveNodeOptions.some((option) => /^--max-(old-space|heap)-size=/.test(option)), 'no heap cap')
  // The young generation is set on every version: Node 24's own size cost 90 MB of RSS for nothing
  // measured, and half Node 20's (8 MiB) keeps a process under four logins within its memory target.
  t.strictSame(serveNodeOptions.filter((option) => option.startsWith('--max-semi-space-size=')), ['--max-semi-space-size=8'])
  // At ten requests in flight V8 tenured sites whose objects live a request, and the old space they died in filled.
  t.ok(serveNodeOptions.includes('--no-allocation-site-pretenuring'), 'no pretenuring by allocation site')
  t.match(scripts.tracer, /&& node dist\/src\/cli\.js$/)
})

t.test('the operations page runs the service as npm start does, in its text and its systemd unit', async (t) => {
  // A deployment copies these lines: the unit had lost --max-semi-space-size before this test.
  const operations = page('operations')
  const commands = [...operations.matchAll(/node ((?:--\S+ )*)dist\/src\/cli\.js serve/g)].map((match) => match[1]!.trim().split(' '))
  t.equal(commands.length, 2, 'the command in the text and the unit’s ExecStart')
  for (const options of commands) t.strictSame(options, serveNodeOptions)
  t.match(operations, /^ExecStart=\/usr\/bin\/node (--\S+ )*dist\/src\/cli\.js serve$/m)
})

t.test('the integrators’ page says what the service decided in its own words', async (t) => {
  for (const text of [readme, integrators]) t.notMatch(text, /CONTRACT/, 'it cites no document that is not in the repository')
  t.match(integrators, /## What clients can rely on/)
  t.match(integrators, /A body may be up to 1 MiB/, 'the body limit')
  t.equal(serverOptions(loadConfig({})).bodyLimit, 1024 * 1024, 'is the one the server has')
  t.match(integrators, /within `REQUEST_TIMEOUT_MS` \(30 s\)/, 'the request timeout')
  t.match(integrators, /`KEEP_ALIVE_TIMEOUT_MS` \(72 s/, 'the keep-alive timeout')
  t.match(integrators, /Give each pipeline worker a user of its own/, 'why workers should not share a user')
  t.match(integrators, /The routes that need no token: `GET \/version`, `\/health`,\s+`\/ready`, `\/metrics`/, '/metrics among them')
  t.match(integrators, /METRICS_REQUIRE_TOKEN=true/, 'and the option to require one')
})

t.test('the audit’s page: every rule, a curl example, the command, cron and the gauges', async (t) => {
  const section = audit
  t.ok(section.length > 100, 'there is one')
  for (const rule of AUDIT_RULES) t.match(section, new RegExp('^- `' + rule + '`', 'm'), `${rule} in a line of its own`)
  t.match(section, /curl -s "\$BASE\/v1\/event-tracer\/audit\?/)
  for (const route of ['audit/{event_no}', 'history/{event_no}', 'stage-latency']) t.match(section, `GET /v1/event-tracer/${route}`)
  t.match(section, /npx tracer audit --since 30d/)
  t.match(section, /cron/)
  t.match(section, /Exit status: 0 when no event of the window is stuck or\s+contradictory; 1 when some are/)
  for (const gauge of ['tracer_audit_events', 'tracer_audit_stuck_stages']) t.match(section, gauge)
})
