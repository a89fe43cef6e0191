import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import t, { type Test } from 'tap'
import { openSqliteStore } from '../../src/store/sqlite/store.js'
import { run } from './run.js'
import { defaultSites } from '../sites.js'
import type { Store } from '../../src/store/port.js'

const event = (event_no: number, overrides: object = {}) => ({
  event_no,
  timestamp_utc: '2024-05-01T10:00:00Z',
  snr: 12.5,
  known_source_name: 'B0329+54',
  ...overrides
})
const member = {
  registered: true,
  should_be_at_minoc: true,
  larger_dataset: { name: 'kko.baseband.2024.05', scope: 'kko.event.baseband.raw', preferred_storage_elements: ['KKO', 'MINOC'], deletion_policy: 'keep' },
  data_path: '/data/kko/baseband/raw/2024/05/01/astro_2',
  num_files: 1024,
  missing_files: []
}
const heartbeat = {
  event_no: 2,
  heartbeat_id: 130,
  site: 'kko',
  sent: { trigger_time: '2024-05-01T10:00:05Z', error: null },
  received: { total_data_files: 1024, dir_size_gb: 60.5, finished_time: '2024-05-01T10:30:00Z', heartbeat_sent_unix_s: 1714559400.5 }
}
const trace = {
  event_no: 2,
  'stages/tsar_classification': 'complete',
  'stages/baseband_callback_request/sites/kko': 'incomplete',
  'stages/baseband_conversion/sites/kko': 'not_required',
  create_timestamp: 1714557600.5,
  update_timestamp: 1714557700.25
}

/** An NDJSON file in the test's folder from records (objects, or raw text for a line as it is). */
function ndjson(t: Test, records: (object | string)[], name = 'import.ndjson'): string {
  const path = join(t.testdir(), name)
  writeFileSync(path, records.map((record) => (typeof record === 'string' ? record : JSON.stringify(record))).join('\n') + '\n')
  return path
}

function openStore(t: Test, path: string): Store {
  const store = openSqliteStore(path, defaultSites)
  t.teardown(() => store.close())
  return store
}

t.test('import reads all four kinds back as they were written', async (t) => {
  const db = join(t.testdir(), 'tracer.sqlite')
  const file = ndjson(t, [
    // Python's str(datetime) for the time, as a pipeline script may write it.
    event(1, { dm: 26.8, tsar_classification: 'astrophysical', timestamp_utc: '2024-05-01 10:00:00.000001' }),
    '',
    event(2, { known_source_name: 'EXT', actions: { want: { baseband: true, kko_baseband: true }, got: { kko_baseband: true } } }),
    { kind: 'trace', ...trace },
    { kind: 'datatrail', event_no: 2, member: 'kko_baseband', ...member },
    { kind: 'heartbeat', ...heartbeat }
  ])
  const result = await run(['import', file], { TRACER_DB: db })
  t.equal(result.status, 0, result.stderr)
  t.match(result.stdout, /^Imported 5 records in \d+\.\d s: 2 events, 1 traces, 1 datatrail members, 1 heartbeats \(1 new\)\.\n$/)

  const store = openStore(t, db)
  t.match(await store.events.find(1), { event_no: 1, timestamp: Date.parse('2024-05-01T10:00:00Z'), snr: 12.5, dm: 26.8, tsar_classification: 'astrophysical', baseband_requested: false })
  t.match(await store.events.find(2), { dm: null, known_source_name: 'EXT', baseband_requested: true, actions: { want: { baseband: true, kko_baseband: true }, got: { kko_baseband: true } } })
  const parts = await store.views.eventParts(2)
  t.strictSame(parts.trace, trace, 'the trace as it was, without kind')
  t.strictSame(parts.datatrail.map((item) => [item.member, item.value]), [['kko_baseband', member]])
  t.strictSame(parts.heartbeats.map((item) => item.heartbeat), [heartbeat])
})

t.test('a file larger than a batch, with CRLF line ends, a byte order mark and blank lines', async (t) => {
  const db = join(t.testdir(), 'tracer.sqlite')
  const lines = Array.from({ length: 12_000 }, (_, index) => JSON.stringify(event(index + 1)))
  const path = join(t.testdir(), 'big.ndjson')
  writeFileSync(path, '\uFEFF' + lines.join('\r\n') + '\r\n\r\n')
  const result = await run(['import', path], { TRACER_DB: db })
  t.equal(result.status, 0, result.stderr)
  t.match(result.stdout, /^Imported 12000 records .*: 12000 events/)
  t.equal((await openStore(t, db).events.find(12_000))?.event_no, 12_000)
})

t.test('a progress bar when standard error is a terminal, and every line read while its module loads', async (t) => {
  const db = join(t.testdir(), 'tracer.sqlite')
  const path = ndjson(t, Array.from({ length: 12_000 }, (_, index) => event(index + 1)))
  const { status, stdout, stderr } = await run(['import', path], { TRACER_DB: db }, '', { terminal: 'stderr' })
  t.equal(status, 0, stderr)
  t.match(stderr, /Importing \[/)
  t.match(stdout, /^Imported 12000 records .*: 12000 events/)
})

t.test('a bad line stops the import, naming the line, after what came before it is written', async (t) => {
  const db = join(t.testdir(), 'tracer.sqlite')
  const file = ndjson(t, [event(1), event(2), { kind: 'heartbeat', ...heartbeat }, event(3, { snr: 'loud' }), event(4)])
  const result = await run(['import', file], { TRACER_DB: db })
  t.equal(result.status, 1)
  t.match(result.stdout, /^Imported 3 records .*, from the lines before line 4\.\n$/)
  t.match(result.stderr, /^tracer: .*import\.ndjson line 4: snr must be number\n$/)
  const store = openStore(t, db)
  t.ok(await store.events.find(2))
  t.equal(await store.events.find(4), null, 'nothing after the bad line')
})

t.test('what makes a line bad', async (t) => {
  const db = join(t.testdir(), 'tracer.sqlite')
  const cases: [object | string, RegExp][] = [
    ['{"event_no": 1,', /line 2: not valid JSON/],
    ['[1, 2]', /line 2: not a JSON object/],
    ['{"__proto__": {"x": 1}, "event_no": 1}', /line 2: the record has a member named "__proto__", which this service refuses/],
    ['{"event_no": 1, "event_no": 2}', /line 2: the record has the member "event_no" twice/],
    ['{"kind": "trace", "event_no": 1, "stages/x": "\\ud800"}', /line 2: stages\/x holds a lone surrogate \(\\ud800\)/],
    [{ kind: 'event', ...event(1) }, /line 2: kind "event" is not one of trace, datatrail, heartbeat, or none for an event/],
    [event(1, { timestamp_utc: '2024-02-30T00:00:00Z' }), /line 2: timestamp_utc must be a date/],
    [event(1, { timestamp_utc: '2024-05-01 10:00:00+24:00' }), /line 2: timestamp_utc must be a date/],
    [event(-1), /line 2: event_no must be >= 0/],
    [{ event_no: 1, snr: 1, timestamp_utc: '2024-05-01' }, /line 2: known_source_name is required/],
    [event(1, { actions: { want: { vla_baseband: true }, got: {} } }), /line 2: actions/],
    [event(1, { stauts: 'x' }), /line 2: stauts is not allowed/],
    [event(1, { actions: { want: { Baseband: true }, got: {} } }), /line 2: actions\.want\.Baseband is not allowed/],
    [{ kind: 'trace', 'stages/x': 'complete' }, /line 2: event_no is required/],
    [{ kind: 'trace', event_no: 1.5 }, /line 2: event_no must be integer/],
    [{ kind: 'datatrail', event_no: 1, member: 'vla_baseband', ...member }, /line 2: member must be one of intensity, baseband, kko_baseband, gbo_baseband, hco_baseband/],
    [{ kind: 'datatrail', event_no: 1, member: 'baseband', ...member, num_files: -1 }, /line 2: num_files must be >= 0/],
    [{ kind: 'datatrail', event_no: 1, member: 'baseband', ...member, extra: 1 }, /line 2: extra is not allowed/],
    [{ kind: 'heartbeat', ...heartbeat, site: 'vla' }, /line 2: site must be one of chime, kko, gbo, hco/],
    [{ kind: 'heartbeat', ...heartbeat, sent: { trigger_time: 'yesterday', error: null } }, /line 2: sent.trigger_time .*date-time/]
  ]
  for (const [index, [line, message]] of cases.entries()) {
    const file = ndjson(t, [event(100), line], `bad-${index}.ndjson`)
    const result = await run(['import', file], { TRACER_DB: db })
    t.equal(result.status, 1, JSON.stringify(line))
    t.match(result.stderr, message, JSON.stringify(line))
    t.equal(result.stderr.split('\n').length, 2, 'one line')
  }
})

t.test('a trace line the API would refuse stops the import at that line, naming it and why; nothing of it is stored', async (t) => {
  const db = join(t.testdir(), 'tracer.sqlite')
  const path = join(t.testdir(), 'bad.ndjson')
  writeFileSync(path, '{"kind":"trace","event_no":500003,"stages/baseband_callback_request/sites/chime":"done"}\n')
  const result = await run(['import', path], { TRACER_DB: db })
  t.equal(result.status, 1)
  t.equal(
    result.stderr,
    `tracer: ${path} line 1: stages/baseband_callback_request/sites/chime: status must be one of complete, incomplete, not_required (the line holds "done")\n`
  )
  t.match(result.stdout, /^Imported 0 records .*, from the lines before line 1\.\n$/)
  t.equal((await openStore(t, db).views.eventParts(500003)).trace, null, 'no trace stored')
})

t.test('a trace line is held to update-trace key by key: its stages, sites and statuses, and no other member', async (t) => {
  // One folder for the store and the files: each t.testdir() call would empty it.
  const dir = t.testdir()
  const db = join(dir, 'tracer.sqlite')
  const line = (fields: object) => ({ kind: 'trace', event_no: 7, 'stages/tsar_classification': 'complete', ...fields })
  const cases: [object, RegExp][] = [
    [line({ 'stages/baseband_conversion/sites/kko': 'done' }), /line 2: stages\/baseband_conversion\/sites\/kko: status must be one of complete, incomplete, not_required \(the line holds "done"\)\n$/],
    [line({ 'stages/tsar_classification': 'Complete' }), /line 2: stages\/tsar_classification: status must be one of .* \(the line holds "Complete"\)\n$/],
    [line({ 'stages/baseband_conversion/sites/kko': 1 }), /line 2: stages\/baseband_conversion\/sites\/kko: status must be string \(the line holds a number\)\n$/],
    [line({ 'stages/baseband_conversion/sites/kko': { status: 'complete' } }), /line 2: stages\/baseband_conversion\/sites\/kko: status must be string \(the line holds an object\)\n$/],
    [line({ 'stages/baseband_conversion/sites/kko': null }), /status must be string \(the line holds null\)\n$/],
    [line({ 'stages/conversion/sites/kko': 'complete' }), /line 2: stages\/conversion\/sites\/kko: stage must be one of tsar_classification, baseband_callback_request, .*\n$/],
    [line({ 'stages/baseband_conversion/sites/vla': 'complete' }), /line 2: stages\/baseband_conversion\/sites\/vla: site must be one of chime, kko, gbo, hco\n$/],
    [line({ 'stages/baseband_conversion/sites/': 'complete' }), /line 2: stages\/baseband_conversion\/sites\/: site must NOT have fewer than 1 characters\n$/],
    [line({ 'stages/tsar_classification/sites/chime': 'complete' }), /line 2: stages\/tsar_classification\/sites\/chime is not a trace key \(stages\/tsar_classification or stages\/\{stage\}\/sites\/\{site\}\)\n$/],
    [line({ 'stages/baseband_conversion': 'complete' }), /line 2: stages\/baseband_conversion is not a trace key/],
    [line({ 'stages/baseband_conversion/sites/kko/x': 'complete' }), /line 2: stages\/baseband_conversion\/sites\/kko\/x: site must be one of/],
    [line({ note: 'kept' }), /line 2: note is not allowed\n$/],
    [line({ update_timestamp: '2024-05-01' }), /line 2: update_timestamp must be number\n$/],
    [line({ create_timestamp: -1 }), /line 2: create_timestamp must be >= 0\n$/]
  ]
  for (const [index, [bad, message]] of cases.entries()) {
    const file = join(dir, `bad-trace-${index}.ndjson`)
    writeFileSync(file, [event(100 + index), bad, event(200 + index)].map((record) => JSON.stringify(record)).join('\n') + '\n')
    const result = await run(['import', file], { TRACER_DB: db })
    t.equal(result.status, 1, JSON.stringify(bad))
    t.match(result.stderr, message, JSON.stringify(bad))
    t.match(result.stdout, /^Imported 1 records .*, from the lines before line 2\.\n$/, 'the line before it is stored')
  }
  const store = openStore(t, db)
  for (const [index] of cases.entries()) t.ok(await store.events.find(100 + index), `line 1 of file ${index}, before the bad one, is stored`)
  t.equal((await store.views.eventParts(7)).trace, null, 'nothing of a bad line')
  t.equal(await store.events.find(200), null, 'nothing after it')
})

/** Control characters a message must never carry to the terminal: all but its closing newline. */
const RAW_CONTROL = /(?!\n)\p{Cc}/u

t.test('a file that is not NDJSON at all: the line and why, never its bytes', async (t) => {
  const db = join(t.testdir(), 'tracer.sqlite')
  const tarHeader = Buffer.concat([Buffer.from('notes.txt'), Buffer.alloc(91), Buffer.from('0000644\u00000000000\u0000'), Buffer.alloc(400)])
  const cases: [string, Buffer, RegExp][] = [
    ['a tar archive', tarHeader, /^tracer: .*\.bin line 1: not JSON text: it holds the control character U\+0000 \(column 10\); is this an NDJSON file\?\n$/],
    ['terminal escapes', Buffer.from('\u001b]0;owned\u0007\u001b[2J{"event_no": 1}\n'), /line 1: not JSON text: it holds the control character U\+001B \(column 1\)/],
    ['gzip', gzipSync(JSON.stringify(event(1))), /line 1: the line is not UTF-8 text/]
  ]
  for (const [name, bytes, message] of cases) {
    const file = join(t.testdir(), `${name.replaceAll(' ', '-')}.bin`)
    writeFileSync(file, bytes)
    const result = await run(['import', file], { TRACER_DB: db })
    t.equal(result.status, 1, name)
    t.match(result.stderr, message, name)
    t.notMatch(result.stderr, RAW_CONTROL, 'none of its bytes echoed')
  }
})

t.test('a line that is merely not JSON keeps its short excerpt, with what a terminal would not show escaped', async (t) => {
  const db = join(t.testdir(), 'tracer.sqlite')
  const cases: [object | string, RegExp][] = [
    ['hello world', /^tracer: .* line 2: not valid JSON \(.*"hello world".*\)\n$/],
    ['ab\u009b[31m', /line 2: not valid JSON \(.*"ab\\u009b\[31m".*\)\n$/],
    [event(1, { 'st\u001b[2J': 1 }), /line 2: st\\u001b\[2J is not allowed\n$/]
  ]
  for (const [index, [line, message]] of cases.entries()) {
    const result = await run(['import', ndjson(t, [event(100), line], `excerpt-${index}.ndjson`)], { TRACER_DB: db })
    t.equal(result.status, 1)
    t.match(result.stderr, message, JSON.stringify(line))
    t.notMatch(result.stderr, RAW_CONTROL, 'no raw control character')
  }
})

t.test('a file that cannot be read', async (t) => {
  const result = await run(['import', join(t.testdir(), 'missing.ndjson')], { TRACER_DB: join(t.testdir(), 'tracer.sqlite') })
  t.equal(result.status, 1)
  t.match(result.stderr, /^tracer: cannot read .*missing\.ndjson \(ENOENT\)\n$/)
  const folder = await run(['import', t.testdir()], { TRACER_DB: join(t.testdir(), 'tracer.sqlite') })
  t.match(folder.stderr, /is not a file/)
})

t.test('--help', async (t) => {
  const result = await run(['import', '--help'], {})
  t.equal(result.status, 0)
  t.match(result.stdout, /^Usage: tracer import \[options\] <file>/)
  t.match(result.stdout, /"kind"/)
})

t.test('a line longer than 1 MiB stops the import as soon as it passes the limit, naming it, with the summary', async (t) => {
  const db = join(t.testdir(), 'tracer.sqlite')
  const path = join(t.testdir(), 'long.ndjson')
  const long = JSON.stringify(event(2, { known_source_name: 'x'.repeat(3 * 1024 * 1024) }))
  writeFileSync(path, [JSON.stringify(event(1)), long, JSON.stringify(event(3))].join('\n') + '\n')
  const result = await run(['import', path], { TRACER_DB: db })
  t.equal(result.status, 1)
  t.match(result.stdout, /^Imported 1 records .*: 1 events.*, from the lines before line 2\.\n$/)
  t.match(result.stderr, /^tracer: .*long\.ndjson line 2: longer than 1048576 bytes \(1 MiB\), the most one record may take; nothing after it was read\n$/)
  const store = openStore(t, db)
  t.ok(await store.events.find(1))
  t.equal(await store.events.find(3), null)
})

t.test('a line of bytes that are not UTF-8 stops the import, naming it', async (t) => {
  const db = join(t.testdir(), 'tracer.sqlite')
  const path = join(t.testdir(), 'latin1.ndjson')
  writeFileSync(path, Buffer.concat([Buffer.from(JSON.stringify(event(1)) + '\n'), Buffer.from(JSON.stringify(event(2, { known_source_name: 'Caf\u00e9' })), 'latin1'), Buffer.from('\n')]))
  const result = await run(['import', path], { TRACER_DB: db })
  t.equal(result.status, 1)
  t.match(result.stdout, /from the lines before line 2\.\n$/)
  t.match(result.stderr, /line 2: the line is not UTF-8 text: some bytes are no UTF-8 character\n$/)
})
