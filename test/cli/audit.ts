import { openKeptDatabase } from '../../src/store/sqlite/native-lifetimes.js'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { toEventRecord } from '../../src/domain/events.js'
import { parseStageDeadlines } from '../../src/domain/stage-deadlines.js'
import { openSqliteStore } from '../../src/store/sqlite/store.js'
import { wireErrors } from '../audit/wire.js'
import { defaultSites } from '../sites.js'
import { run } from './run.js'

const MINUTE = 60_000
const DAY = 24 * 60 * MINUTE
const STAGES = ['baseband_callback_request', 'baseband_conversion', 'data_registration', 'data_replication_to_minoc']

/** The `tracer audit` command with standard output a terminal (a table by default) or not. */
const audit = (args: string[], env: Record<string, string>, { terminal = false } = {}) =>
  run(['audit', ...args], env, '', terminal ? { terminal: 'stdout' } : {})

/** A store with three baseband events of the last days, one of each flagged verdict, and one without baseband data. */
async function smallStore(t: Test) {
  const env = { TRACER_DB: join(t.testdir(), 'tracer.sqlite') }
  const store = openSqliteStore(env.TRACER_DB, defaultSites)
  const now = Date.now()
  const record = (event_no: number, ago: number, want: Record<string, boolean>) =>
    toEventRecord({ event_no, timestamp_utc: new Date(now - ago).toISOString(), snr: 12.5, known_source_name: 'B0329+54', actions: { want, got: {} } }, defaultSites, 1)
  await store.events.upsert([
    record(1, 3 * DAY, { baseband: true }),
    record(2, DAY, { baseband: true, kko_baseband: true }),
    record(3, 10 * MINUTE, { gbo_baseband: true }),
    record(4, DAY, { intensity: true })
  ])
  const complete = Object.fromEntries(STAGES.map((stage) => [`stages/${stage}/sites/chime`, 'complete']))
  await store.traces.upsert([
    { event_no: 1, 'stages/tsar_classification': 'complete', ...complete },
    { event_no: 3, 'stages/baseband_conversion/sites/gbo': 'complete' }
  ])
  await store.datatrail.put([
    { event_no: 1, member: 'baseband', value: { registered: true, should_be_at_minoc: true, larger_dataset: {}, data_path: '/d', num_files: 3, missing_files: [] }, update_timestamp: 1 }
  ])
  await store.close()
  return env
}

t.test('a classified event whose trace says the classification is incomplete: a contradiction on tsar_classification; exit 1', async (t) => {
  const env = { TRACER_DB: join(t.testdir(), 'tracer.sqlite') }
  const store = openSqliteStore(env.TRACER_DB, defaultSites)
  const record = (event_no: number, tsar_classification?: string) =>
    toEventRecord(
      { event_no, timestamp_utc: new Date(Date.now() - 2 * 60 * MINUTE).toISOString(), snr: 9, known_source_name: 'EXT', tsar_classification, actions: { want: { baseband: true }, got: {} } },
      defaultSites,
      1
    )
  await store.events.upsert([record(5, 'astrophysical'), record(6)])
  await store.close()
  const json = await audit(['--since', '1d', '--format', 'json'], env)
  t.equal(json.status, 1, json.stderr)
  const [classified, unclassified] = JSON.parse(json.stdout).events
  t.equal(classified.verdict, 'contradiction')
  t.strictSame(
    classified.findings.filter((found: { stage: string }) => found.stage === 'tsar_classification').map((found: { rule: string }) => found.rule),
    ['classified-not-in-trace', 'stuck'],
    'the contradiction, and the stuck finding beside it'
  )
  t.equal(unclassified.verdict, 'stuck', 'an unclassified event past its deadline stays stuck')
  t.notOk(unclassified.findings.some((found: { rule: string }) => found.rule === 'classified-not-in-trace'))
  const table = await audit(['--since', '1d'], env, { terminal: true })
  t.equal(table.status, 1)
  t.match(table.stdout, /^ {7}5 .* contradiction .*classified-not-in-trace: the event is classified "astrophysical" but tsar_classification is incomplete in the trace/m)
})

t.test('a table on a terminal: the window, the counts by verdict, a line per stuck or contradictory event; exit 1', async (t) => {
  const env = await smallStore(t)
  const result = await audit(['--since', '7d'], env, { terminal: true })
  t.equal(result.status, 1, result.stderr)
  t.equal(result.stderr, '')
  const lines = result.stdout.split('\n')
  t.match(lines[0], /^Audit of \d{4}-\d\d-\d\dT[\d:.]+Z to \d{4}-\d\d-\d\dT[\d:.]+Z \(at \d{4}-\d\d-\d\dT[\d:.]+Z\)$/)
  t.strictSame(lines.slice(1, 5), ['', 'events  complete  in_progress  stuck  contradiction', '     3         1            0      1              1', ''])
  t.match(lines[5], /^event_no {2}timestamp_utc {18}age {2}verdict {8}sites {6}findings$/)
  t.match(
    lines[6],
    /^ {7}2 {2}\S{24} {4}24\.0 h {2}stuck {10}chime,kko {2}stuck: tsar_classification \| stuck at chime: baseband_callback_request, baseband_conversion, data_registration \| stuck at kko: baseband_callback_request, baseband_conversion, data_registration$/
  )
  t.match(lines[7], /^ {7}3 {2}\S{24} {2}10\.0 min {2}contradiction {2}gbo {8}out-of-order: baseband_conversion at gbo complete while earlier stage baseband_callback_request is incomplete$/)
  t.strictSame(lines.slice(8), [''], 'nothing more')
})

t.test('JSON when standard output is not a terminal: the route’s report', async (t) => {
  const env = await smallStore(t)
  const result = await audit([], env)
  t.equal(result.status, 1, result.stderr)
  t.ok(result.stdout.endsWith('}\n'), 'one JSON document and a newline')
  const report = JSON.parse(result.stdout)
  t.equal(wireErrors('AuditReport', report), '', 'an AuditReport')
  t.strictSame(report.summary, { events: 3, complete: 1, in_progress: 0, stuck: 1, contradiction: 1 })
  t.strictSame(
    report.events.map((event: { event_no: number; verdict: string }) => [event.event_no, event.verdict]),
    [[1, 'complete'], [2, 'stuck'], [3, 'contradiction']]
  )
  const days = (Date.parse(report.window.end_time_utc) - Date.parse(report.window.start_time_utc)) / DAY
  t.equal(days, 7, 'the last 7 days by default')
  t.equal(report.window.end_time_utc, report.generated_at, 'up to now')

  const table = await audit(['--format', 'table'], env)
  t.match(table.stdout, /^Audit of /, '--format table without a terminal')
  const json = await audit(['--format', 'json'], env, { terminal: true })
  t.doesNotThrow(() => JSON.parse(json.stdout), '--format json on a terminal')
})

t.test('exit 0 when nothing is stuck or contradictory: an empty window, a window of complete events', async (t) => {
  const env = await smallStore(t)
  const empty = await audit(['--start', '2020-01-01', '--end', '2020-01-02T00:00:00Z'], env)
  t.equal(empty.status, 0, empty.stderr)
  t.match(JSON.parse(empty.stdout), {
    window: { start_time_utc: '2020-01-01T00:00:00.000Z', end_time_utc: '2020-01-02T00:00:00.000Z' },
    summary: { events: 0, complete: 0, in_progress: 0, stuck: 0, contradiction: 0 },
    events: []
  })
  // Only the event of a day ago, within every deadline but the last: in progress is not flagged.
  const window = ['--start', new Date(Date.now() - 2 * DAY).toISOString(), '--end', new Date(Date.now() - 60 * MINUTE).toISOString()]
  const deadlines = { STAGE_DEADLINES: STAGES.slice(0, 3).map((stage) => `${stage}=2d`).join(',') + ',tsar_classification=2d' }
  const inProgress = await audit([...window, '--format', 'table'], { ...env, ...deadlines })
  t.equal(inProgress.status, 0, inProgress.stderr)
  t.match(inProgress.stdout, /\n {5}1 {9}0 {12}1 {6}0 {14}0\n\nNo event is stuck or contradictory\.\n$/)
})

t.test('the demo store has stuck and contradictory events: exit 1', async (t) => {
  const env = { TRACER_DB: join(t.testdir(), 'tracer.sqlite') }
  t.equal((await run(['seed', '--demo'], env)).status, 0)
  const result = await audit(['--since', '30d'], env, { terminal: true })
  t.equal(result.status, 1, result.stderr)
  const [, counts = ''] = /contradiction\n(.*)\n/.exec(result.stdout) ?? []
  const [events = 0, complete = 0, inProgress = 0, stuck = 0, contradiction = 0] = counts.trim().split(/\s+/).map(Number)
  t.ok(stuck > 0 && contradiction > 0, counts)
  t.equal(events, complete + inProgress + stuck + contradiction)
  const flagged = result.stdout.split('\n').filter((line) => /^\s*\d+\s+\d{4}-/.test(line))
  t.equal(flagged.length, stuck + contradiction, 'a line per stuck or contradictory event')
})

t.test('usage errors end with exit status 2 and one line on stderr', async (t) => {
  const env = { TRACER_DB: join(t.testdir(), 'tracer.sqlite') }
  const cases: [string[], RegExp][] = [
    [['--since', '7d', '--start', '2026-01-01', '--end', '2026-01-02'], /option '--since <duration>' cannot be used with option '--start <time>'/],
    [['--end', '2026-01-02', '--since', '1d'], /cannot be used with/],
    [['--since', '7w'], /Expected a duration such as 7d, 12h, 90m or 30s: the unit must be s, m, h or d/],
    [['--since', '0d'], /longer than zero/],
    [['--since', '400d'], /^tracer: --since is longer than MAX_WINDOW_DAYS \(366 days\)\n$/],
    [['--start', '2026-01-01'], /^tracer: --start and --end go together/],
    [['--end', '2026-01-01'], /^tracer: --start and --end go together/],
    [['--start', '2026-02-30', '--end', '2026-03-02'], /option '--start <time>' argument '2026-02-30' is invalid/],
    [['--start', '2026-01-02', '--end', '2026-01-01'], /^tracer: --end must be later than --start\n$/],
    [['--start', '2020-01-01', '--end', '2026-01-01'], /^tracer: --end is more than 366 days after --start\n$/],
    [['--format', 'xml'], /Allowed choices are table, json/],
    [['--verbose'], /unknown option '--verbose'/],
    [['7d'], /too many arguments/]
  ]
  for (const [args, message] of cases) {
    const result = await audit(args, env)
    t.equal(result.status, 2, args.join(' '))
    t.match(result.stderr, message, args.join(' '))
    t.equal(result.stdout, '', 'no report')
  }
  const help = await audit(['--help'], env)
  t.equal(help.status, 0)
  for (const option of ['--since <duration>', '--start <time>', '--end <time>', '--format <format>']) t.match(help.stdout, option)
})

t.test('--recompute finds a kept audit that serves a wrong verdict, repairs it, names it on stderr and exits 4', async (t) => {
  const env = await smallStore(t)
  // As a bug or another program could: event 3's kept report made to say complete, with no findings.
  const db = openKeptDatabase(env.TRACER_DB)
  db.prepare(
    `UPDATE audits SET verdict = 'complete', report = json_set(report, '$.contradictions', json('[]'), '$.pending', json('[]'), '$.complete', json('true')) WHERE event_no = 3`
  ).run()
  db.close()
  const verdictOf3 = (stdout: string) => (JSON.parse(stdout) as { events: { event_no: number; verdict: string }[] }).events.find((event) => event.event_no === 3)?.verdict
  const plain = await audit(['--since', '7d'], env)
  t.equal(verdictOf3(plain.stdout), 'contradiction', 'the plain audit reports what the records say')
  t.match(plain.stderr, /^event 3: the kept audit differs from its records \(record\); not repaired here/m, 'and names the kept row that differs')

  const recomputed = await audit(['--since', '7d', '--recompute'], env)
  t.equal(recomputed.status, 4, recomputed.stderr)
  t.match(recomputed.stderr, /^event 3: the kept audit differed from its records \([a-z_, ]*record[a-z_, ]*\); repaired$/m)
  t.match(recomputed.stderr, /: 3 events, 1 differed/)
  t.equal(verdictOf3(recomputed.stdout), 'contradiction')
  const repaired = await audit(['--since', '7d'], env)
  t.equal(verdictOf3(repaired.stdout), 'contradiction')
  t.equal(repaired.stderr, '', 'repaired: the plain audit finds nothing differing')
  const again = await audit(['--since', '7d', '--recompute'], env)
  t.equal(again.status, 1, 'nothing differs any more: the exit status says what the audit found')
  t.match(again.stderr, /: 3 events, 0 differed/)
})

/** Every row of the tables a hand edit touches, to show that a command wrote nothing. */
function contents(path: string) {
  const db = openKeptDatabase(path, { readonly: true })
  try {
    return JSON.stringify(['audits', 'events', 'traces', 'settings'].map((table) => db.prepare(`SELECT * FROM ${table} ORDER BY 1`).raw().all()))
  } finally {
    db.close()
  }
}

const verdicts = (stdout: string) => (JSON.parse(stdout) as { events: { event_no: number; verdict: string }[] }).events.map((event) => [event.event_no, event.verdict])

t.test('with no service running, kept verdicts edited by hand are no all-clear: the plain audit reports the records, names the rows, writes nothing', async (t) => {
  const env = await smallStore(t)
  // Events 2 (stuck) and 3 (contradiction) made to serve complete, with no findings, as a hand edit could.
  const db = openKeptDatabase(env.TRACER_DB)
  db.prepare(
    `UPDATE audits SET verdict = 'complete', report = json_set(report, '$.contradictions', json('[]'), '$.pending', json('[]'), '$.complete', json('true')) WHERE event_no IN (2, 3)`
  ).run()
  db.close()
  const before = contents(env.TRACER_DB)
  for (const format of ['json', 'table']) {
    const result = await audit(['--since', '7d', '--format', format], env)
    t.equal(result.status, 1, `${format}: the records hold a stuck and a contradictory event`)
    for (const eventNo of [2, 3]) t.match(result.stderr, new RegExp(`^event ${eventNo}: the kept audit differs from its records \\(record\\); not repaired here`, 'm'))
    t.match(result.stderr, /: 3 events, 2 differed/)
    if (format === 'json') t.strictSame(verdicts(result.stdout), [[1, 'complete'], [2, 'stuck'], [3, 'contradiction']], 'the verdicts the records make')
    else t.match(result.stdout, /\n {5}3 {9}1 {12}0 {6}1 {14}1\n/)
  }
  t.equal(contents(env.TRACER_DB), before, 'a command that reads wrote nothing')
})

t.test('with no service running, kept columns edited by hand are named by the plain audit, which reports the event still', async (t) => {
  const env = await smallStore(t)
  // Event 2 (stuck) made to ask for no baseband data, event 3's listed source name forged.
  const db = openKeptDatabase(env.TRACER_DB)
  db.prepare('UPDATE events SET baseband_requested = 0 WHERE event_no = 2').run()
  db.prepare(`UPDATE events SET output = json_set(output, '$.known_source_name', 'FORGED-EXT') WHERE event_no = 3`).run()
  db.close()
  const before = contents(env.TRACER_DB)
  const result = await audit(['--since', '7d'], env)
  t.equal(result.status, 1, result.stderr)
  t.strictSame(verdicts(result.stdout), [[1, 'complete'], [2, 'stuck'], [3, 'contradiction']], 'event 2 is audited: its actions ask for baseband data')
  t.match(result.stderr, /^event 2: the kept events\.baseband_requested differs from its records; not repaired here/m)
  t.match(result.stderr, /^event 3: the kept events\.output differs from its records; not repaired here/m)
  t.equal(contents(env.TRACER_DB), before, 'a command that reads wrote nothing')
})

t.test('--recompute repairs a baseband flag cleared by hand, and keeps the event in the audit', async (t) => {
  const env = await smallStore(t)
  const db = openKeptDatabase(env.TRACER_DB)
  db.prepare('UPDATE events SET baseband_requested = 0 WHERE event_no = 2').run()
  db.close()
  const recomputed = await audit(['--since', '7d', '--recompute'], env)
  t.equal(recomputed.status, 4, recomputed.stderr)
  t.match(recomputed.stderr, /^event 2: the kept events\.baseband_requested differed from its records; repaired$/m)
  t.notMatch(recomputed.stderr, /kept audit differed/, 'the kept audit agreed with the records: it is not removed')
  t.strictSame(verdicts(recomputed.stdout), [[1, 'complete'], [2, 'stuck'], [3, 'contradiction']])
  const again = await audit(['--since', '7d', '--recompute'], env)
  t.equal(again.status, 1, again.stderr)
  t.match(again.stderr, /: 3 events, 0 differed/)
})

t.test('--recompute writes, so it refuses deadlines other than the store’s: its repairs would be undone by every instance', async (t) => {
  const env = await smallStore(t)
  const other = await audit(['--since', '7d', '--recompute'], { ...env, STAGE_DEADLINES: 'tsar_classification=2d' })
  t.equal(other.status, 1, other.stderr)
  t.match(other.stderr, /^tracer: STAGE_DEADLINES is .* here but .* in the store/)
  t.equal(other.stderr.trim().split('\n').length, 1, 'one line')
  t.equal((await audit(['--since', '7d', '--recompute'], env)).status, 1, 'with the store’s own: checked, nothing differed, exit 1 for the stuck event')
})

t.test('a kept audit a start left half made is not read: one line, exit 1, nothing written; --recompute makes it first', async (t) => {
  const env = await smallStore(t)
  // A start with other deadlines stopped after its first batch of one event, as a kill between two batches leaves it.
  const deadlines = 'data_registration=6h'
  const left = openSqliteStore(env.TRACER_DB, defaultSites, { deadlines: parseStageDeadlines(deadlines), rebuild: 'left', rebuildBatch: 1 })
  await left.close()
  const contents = () => {
    const db = openKeptDatabase(env.TRACER_DB, { readonly: true })
    try {
      return JSON.stringify([db.prepare('SELECT * FROM audits ORDER BY event_no').raw().all(), db.prepare('SELECT * FROM settings ORDER BY name').raw().all()])
    } finally {
      db.close()
    }
  }
  const before = contents()
  const refused = await audit(['--since', '7d'], { ...env, STAGE_DEADLINES: deadlines })
  t.equal(refused.status, 1)
  t.equal(refused.stdout, '')
  t.match(refused.stderr, /^tracer: The kept audit is being made again .*: 1 of 3 events done; try again shortly\. A serving instance makes it; --recompute makes it here first\.\n$/)
  t.equal(contents(), before, 'a command that reads wrote nothing')

  const recomputed = await audit(['--since', '7d', '--recompute'], { ...env, STAGE_DEADLINES: deadlines })
  t.equal(recomputed.status, 1, recomputed.stderr)
  const read = await audit(['--since', '7d'], { ...env, STAGE_DEADLINES: deadlines })
  t.equal(read.stderr, '', 'read once it is made')
  t.match(JSON.parse(read.stdout), { summary: { events: 3 } })
})
