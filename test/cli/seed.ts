import { join } from 'node:path'
import t, { type Test } from 'tap'
import { openSqliteStore } from '../../src/store/sqlite/store.js'
import type { EventRecord } from '../../src/domain/records.js'
import type { Store } from '../../src/store/port.js'
import { run } from './run.js'
import { defaultSites } from '../sites.js'

const DAY = 86_400_000
const EVENTS = 2000

/** Seeds a new store in the test's folder; resolves to its path and the command's result. */
async function seeded(t: Test, args: string[] = [], file = 'tracer.sqlite') {
  const path = join(t.testdir(), file)
  const result = await run(['seed', '--demo', '--events', String(EVENTS), '--days', '10', ...args], { TRACER_DB: path })
  return { path, result }
}

/** Every event of the store (the seeded ones lie in the last 10 days), oldest first. */
async function allEvents(t: Test, path: string): Promise<{ store: Store; events: EventRecord[] }> {
  const store = openSqliteStore(path, defaultSites)
  t.teardown(() => store.close())
  const window = { start: Date.now() - 11 * DAY, end: Date.now() + DAY }
  const rows = await store.events.page({ window, order: 'asc', limit: 10 * EVENTS })
  const events = await Promise.all(rows.map(async ({ position }) => (await store.events.find(position.event_no))!))
  return { store, events }
}

t.test('seed --demo writes the events asked for, a fraction with baseband data and its parts', async (t) => {
  const { path, result } = await seeded(t)
  t.equal(result.status, 0, result.stderr)
  t.match(result.stdout, /^Seeded 2000 events \(\d+ asking for baseband data\), \d+ traces, \d+ datatrail members and \d+ heartbeats in \d+\.\d s\.\n$/)
  t.equal(result.stderr, '', 'no progress bar when standard error is not a terminal')

  const { store, events } = await allEvents(t, path)
  t.equal(events.length, EVENTS)
  t.strictSame(events.map((event) => event.event_no), Array.from({ length: EVENTS }, (_, index) => index + 1))
  const baseband = events.filter((event) => event.baseband_requested)
  t.ok(baseband.length > 0.12 * EVENTS && baseband.length < 0.28 * EVENTS, `${baseband.length} ask for baseband data`)

  let withTrace = 0
  let withDatatrail = 0
  let withHeartbeats = 0
  let notRequired = 0
  for (const event of baseband) {
    const parts = await store.views.eventParts(event.event_no)
    if (parts.trace !== null) withTrace++
    if (parts.datatrail.length > 0) withDatatrail++
    if (parts.heartbeats.length > 0) withHeartbeats++
    if (parts.trace !== null && Object.values(parts.trace).includes('not_required')) notRequired++
  }
  t.ok(withTrace > 0.85 * baseband.length, `${withTrace} traces`)
  t.ok(withDatatrail > 0.7 * baseband.length, `${withDatatrail} with datatrail`)
  t.ok(withHeartbeats > 0.7 * baseband.length, `${withHeartbeats} with heartbeats`)
  t.ok(notRequired > 0, `${notRequired} traces hold not_required`)

  const other = events.find((event) => !event.baseband_requested)!
  const parts = await store.views.eventParts(other.event_no)
  t.strictSame([parts.trace, parts.datatrail, parts.heartbeats], [null, [], []], 'nothing but the event without baseband')
})

t.test('the same seed writes the same data; another seed other data', async (t) => {
  // Times are relative to now, so compare what does not depend on when the command ran.
  const content = async (args: string[], file: string) => {
    const { path, result } = await seeded(t, args, file)
    t.equal(result.status, 0, result.stderr)
    const { events } = await allEvents(t, path)
    return JSON.stringify(events.map(({ event_no, snr, dm, known_source_name, tsar_classification, actions }) => [event_no, snr, dm, known_source_name, tsar_classification, actions]))
  }
  const first = await content(['--seed', '42'], 'first.sqlite')
  t.equal(await content(['--seed', '42'], 'second.sqlite'), first)
  t.not(await content(['--seed', '43'], 'other.sqlite'), first)
})

t.test('--first-event-no moves the event numbers', async (t) => {
  const { path, result } = await seeded(t, ['--first-event-no', '1000000'])
  t.equal(result.status, 0, result.stderr)
  const { events } = await allEvents(t, path)
  t.equal(events[0]?.event_no, 1_000_000)
  t.equal(events.at(-1)?.event_no, 1_000_000 + EVENTS - 1)
})

t.test('seeding over seeded events warns', async (t) => {
  const env = { TRACER_DB: join(t.testdir(), 'tracer.sqlite') }
  t.equal((await run(['seed', '--demo', '--events', '10'], env)).status, 0)
  const again = await run(['seed', '--demo', '--events', '10'], env)
  t.equal(again.status, 0)
  t.match(again.stderr, /warning: event 1 exists already/)
})

t.test('mistakes end with exit status 1 and one line on stderr', async (t) => {
  const env = { TRACER_DB: join(t.testdir(), 'tracer.sqlite') }
  const cases: [string[], RegExp][] = [
    [['seed'], /^tracer: seed writes synthetic demo data only: add --demo\n$/],
    [['seed', '--demo', '--events', '0'], /Expected an integer from 1/],
    [['seed', '--demo', '--events', '1e3'], /Expected an integer from 1/],
    [['seed', '--demo', '--days', '-1'], /Expected a number above 0/],
    [['seed', '--demo', '--seed', '4294967296'], /Expected an integer from 0 to 4294967295/],
    [['seed', '--demo', '--first-event-no', '9007199254740000'], /event numbers above \d+ are not supported/]
  ]
  for (const [args, message] of cases) {
    const result = await run(args, env)
    t.equal(result.status, 1, args.join(' '))
    t.match(result.stderr, message, args.join(' '))
  }
})

t.test('--help', async (t) => {
  const result = await run(['seed', '--help'], {})
  t.equal(result.status, 0)
  t.match(result.stdout, /^Usage: tracer seed \[options\]/)
  for (const option of ['--demo', '--events <n>', '--days <d>', '--seed <n>', '--first-event-no <n>']) t.match(result.stdout, option)
})

t.test('a progress bar when standard error is a terminal', async (t) => {
  const env = { TRACER_DB: join(t.testdir(), 'tracer.sqlite') }
  // Two batches of seedDemo's 5000: the bar moves once on the way.
  const { status, stdout, stderr } = await run(['seed', '--demo', '--events', '10000'], env, '', { terminal: 'stderr' })
  t.equal(status, 0, 'exit status')
  t.match(stderr, /Seeding events \[.*\] 100% \| 10000\/10000/)
  t.match(stdout, /^Seeded 10000 events/)
})
