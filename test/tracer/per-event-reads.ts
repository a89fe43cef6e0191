import type { Test } from 'tap'
import t from 'tap'
import { encodeHistoryAfter } from '../../src/domain/history-cursor.js'
import { openKeptDatabase } from '../../src/store/sqlite/native-lifetimes.js'
import { run as runTracer } from '../cli/run.js'
import { statementsOf, unboundedBy, type StatementRun } from '../sqlite-statements.js'
import { allStagesAt, HOUR, iso, NOW, pipelineApp } from './pipeline.js'

/*
 * Issue 29, finding 6: every read of one event's records, by the routes and by the command-line
 * tool, is held to a bounded cost however long the event's history and however many its
 * heartbeats: counted in the statements SQLite runs and the rows they give, not timed.
 */

const EVENT = 7
const TRANSITIONS = 200_000
const HEARTBEATS = 100_000
/** What any one read may take of an event's history and heartbeats: a part of 1000, and a few seeks. */
const ROWS_A_READ = 1100

/** An event of the pipeline's, then, as another program would write them, a long history and many heartbeats. */
async function longEvent(t: Test) {
  const pipeline = await pipelineApp(t)
  await pipeline.report({
    event_no: EVENT,
    ago: HOUR,
    want: { baseband: true, kko_baseband: true },
    complete: ['tsar', ...allStagesAt('chime').slice(0, 2)],
    heartbeats: [
      { id: 1, site: 'kko', finished: true },
      { id: 2, site: 'chime', finished: false, error: 'disk full' }
    ]
  })
  const path = pipeline.app.config.TRACER_DB
  const db = openKeptDatabase(path)
  t.teardown(() => db.close())
  const keys = JSON.stringify(pipeline.app.config.TRACER_SITES.traceKeys)
  db.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < @count - 1)
     INSERT INTO transitions (event_no, key, "from", "to", at, by)
     SELECT @event, json_extract(@keys, '$[' || (i % json_array_length(@keys)) || ']'), NULL,
            CASE WHEN i % 2 = 0 THEN 'complete' ELSE 'incomplete' END, @start + (i / 10) * 0.001, 'other' FROM n`
  ).run({ count: TRANSITIONS, event: EVENT, keys, start: NOW / 1000 })
  db.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < @count - 1)
     INSERT INTO heartbeats (heartbeat_id, event_no, doc, update_timestamp)
     SELECT 1000 + i, @event, json_object('event_no', @event, 'heartbeat_id', 1000 + i, 'site', 'kko',
            'sent', json_object('trigger_time', @time, 'error', NULL),
            'received', json_object('total_data_files', 1, 'dir_size_gb', 1, 'finished_time', NULL, 'heartbeat_sent_unix_s', 1)),
            @now FROM n`
  ).run({ count: HEARTBEATS, event: EVENT, time: iso(NOW), now: NOW / 1000 })
  // A position deep in the history, as a link of the service's would give it.
  const deep = db.prepare<[number], { at: number; seq: number }>('SELECT at, seq FROM transitions WHERE event_no = ? ORDER BY at, seq LIMIT 1 OFFSET 150000').get(EVENT)!
  return { pipeline, path, db, deep: encodeHistoryAfter(EVENT, { at: deep.at, written: deep.seq }) }
}

t.test('every read of one event’s records, by a route or by the tool, runs bounded statements only, whatever its history', async (t) => {
  const { pipeline, path, db, deep } = await longEvent(t)
  const window = `start_time_utc=${iso(NOW - 2 * HOUR)}&end_time_utc=${iso(NOW)}`
  const reads: [string, () => Promise<{ ok: boolean; detail: string }>][] = [
    ...[
      `/v1/event-tracer/history/${EVENT}`,
      `/v1/event-tracer/history/${EVENT}?after=${deep}`,
      `/v1/event-tracer/history/${EVENT}?after=${encodeHistoryAfter(EVENT, { at: 1e12, written: 0 })}`,
      `/v1/event-tracer/heartbeats/${EVENT}`,
      `/v1/event-tracer/heartbeats/${EVENT}?after_heartbeat_id=90000`,
      `/v1/event-tracer/heartbeats/${EVENT}?after_heartbeat_id=1000000000`,
      `/v1/event-tracer/event-status/${EVENT}`,
      `/v1/event-tracer/audit/${EVENT}`,
      `/v1/events/${EVENT}`,
      `/v1/event-tracer/stage-latency?${window}`,
      `/v1/event-tracer/audit?${window}`
    ].map((url): [string, () => Promise<{ ok: boolean; detail: string }>] => [
      url,
      async () => {
        const response = await pipeline.read(url)
        return { ok: response.statusCode === 200, detail: `${response.statusCode} ${response.body.slice(0, 200)}` }
      }
    ]),
    ...[
      ['audit', '--start', iso(NOW - 2 * HOUR), '--end', iso(NOW), '--format', 'json'],
      ['audit', '--start', iso(NOW - 2 * HOUR), '--end', iso(NOW), '--format', 'json', '--recompute']
    ].map((args): [string, () => Promise<{ ok: boolean; detail: string }>] => [
      `tracer ${args.join(' ')}`,
      async () => {
        const result = await runTracer(args, { TRACER_DB: path })
        // 0 clean, 1 some stuck or contradictory, 4 a kept audit repaired: the command ran its reads.
        return { ok: [0, 1, 4].includes(result.status), detail: `exit ${result.status} ${result.stderr.slice(0, 200)}` }
      }
    ])
  ]
  t.equal(Number(db.prepare('SELECT COUNT(*) FROM transitions WHERE event_no = ?').pluck().get(EVENT)) > TRANSITIONS, true, 'the event has its long history')
  for (const [name, read] of reads) {
    const { result, statements } = await statementsOf(read)
    t.ok(result.ok, `${name}: ${result.detail}`)
    const ofRecords = statements.filter((statement) => /^\s*(SELECT|WITH)\b/i.test(statement.sql) && /\b(transitions|heartbeats)\b/.test(statement.sql))
    const unbounded = distinct(ofRecords).flatMap((statement) => {
      const why = unboundedBy(db, statement)
      return why === null ? [] : [`${statement.sql.replace(/\s+/g, ' ').slice(0, 160)}: ${why}`]
    })
    t.strictSame(unbounded, [], `${name}: every statement on the event's history and heartbeats is cut to a bounded part`)
    const rows = ofRecords.reduce((sum, statement) => sum + statement.rows, 0)
    t.ok(rows <= ROWS_A_READ, `${name}: ${rows} rows of the history and heartbeats read, of ${TRANSITIONS + HEARTBEATS}`)
  }
})

/** One run of each statement text, the first. */
function distinct(statements: StatementRun[]): StatementRun[] {
  const seen = new Map<string, StatementRun>()
  for (const statement of statements) if (!seen.has(statement.sql)) seen.set(statement.sql, statement)
  return [...seen.values()]
}

t.test('the check finds the reads issue 29 found: a count, an offset, a whole history, a sort of it', async (t) => {
  const { app } = await pipelineApp(t)
  const db = openKeptDatabase(app.config.TRACER_DB)
  t.teardown(() => db.close())
  const found = (sql: string, ...args: unknown[]) => unboundedBy(db, { sql, args, rows: 0 })
  t.match(found('SELECT COUNT(*) FROM transitions WHERE event_no = ?', EVENT), /^aggregates over SEARCH transitions/)
  t.match(found('SELECT key FROM transitions WHERE event_no = ? ORDER BY at, seq LIMIT ? OFFSET ?', EVENT, 1000, 150_000), /^an OFFSET steps over/)
  t.match(found("SELECT key FROM transitions WHERE event_no IN (SELECT value FROM json_each(?)) ORDER BY event_no, at, seq", `[${EVENT}]`), /^no LIMIT cuts/)
  t.match(found('SELECT key FROM transitions WHERE event_no = ? ORDER BY by LIMIT 10', EVENT), /^sorts every row of/)
  t.match(found('SELECT key FROM transitions WHERE by = ? LIMIT 10', 'other'), /^scans: SCAN transitions/)
  t.equal(found('SELECT key FROM transitions WHERE event_no = ? ORDER BY at, seq LIMIT 10', EVENT), null, 'a part read in the index order is bounded')
  t.equal(found('SELECT doc FROM heartbeats WHERE heartbeat_id = ?', 1), null, 'and so is a lookup of one row')
})
