import t from 'tap'
import { openKeptDatabase } from '../../src/store/sqlite/native-lifetimes.js'
import { claims, signJwt } from '../helper.js'
import { statementsOf, unboundedBy, type StatementRun } from '../sqlite-statements.js'
import { get } from './fixtures.js'
import { NOW, pipelineApp } from './pipeline.js'

/*
 * Issue 29, finding 1: one event with 1,000,000 transitions, its history read by ten clients at once
 * and walked whole by the service's own links. What each part costs is counted here (the statements
 * SQLite runs and the rows they give); the times, /health's p95 and each part's, are measured by
 * `npm run bench` (`history of a 1,000,000-transition event`).
 */

const EVENT = 1
const TRANSITIONS = 1_000_000
const PART = 1000
/** A part: its transitions and one more (whether any follow), in at most two seeks; no total. */
const ROWS_A_PART = PART + 1
const STATEMENTS_A_PART = 2

type Transition = { key: string; at: number; by: string }

const nextOf = (link: unknown) => (typeof link === 'string' ? (/^<([^>]+)>; rel="next"$/.exec(link)?.[1] ?? null) : null)
/** The statements of a read on the history and its kept count. */
const ofHistory = (statements: readonly StatementRun[]) => statements.filter((statement) => /\btransitions\b/.test(statement.sql) && /^\s*SELECT\b/i.test(statement.sql))

t.test('an event of 1,000,000 transitions: ten clients read its history and one walks it whole, each part a bounded read', async (t) => {
  const pipeline = await pipelineApp(t)
  await pipeline.write('/v1/event-tracer/update-trace', { event: EVENT, site: 'kko', stage: 'baseband_conversion', status: 'complete' })
  // Another program's history, ten transitions to each `at`: a part may end inside a run of one `at`.
  const db = openKeptDatabase(pipeline.app.config.TRACER_DB)
  t.teardown(() => db.close())
  db.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < @count - 1)
     INSERT INTO transitions (event_no, key, "from", "to", at, by)
     SELECT @event, 'stages/baseband_conversion/sites/kko', NULL, CASE WHEN i % 2 = 0 THEN 'incomplete' ELSE 'complete' END,
            @start + (i / 10) * 0.001, 'other' FROM n`
  ).run({ count: TRANSITIONS, event: EVENT, start: NOW / 1000 + 1 })
  const total = TRANSITIONS + 1
  const plans = new Map<string, string | null>()
  const bounded = (statements: readonly StatementRun[]) =>
    statements.flatMap((statement) => {
      if (!plans.has(statement.sql)) plans.set(statement.sql, unboundedBy(db, statement))
      const why = plans.get(statement.sql)
      return why === null || why === undefined ? [] : [`${statement.sql.replace(/\s+/g, ' ')}: ${why}`]
    })

  t.test('ten clients, each its own user and address, read its history while /health is asked', async (t) => {
    // Reads need no stored user: tokens signed as the service signs them, at its clock (logins would meet the login limit).
    const clients = Array.from({ length: 10 }, (_, i) => ({ token: signJwt(claims(`reader${i}`, {}, pipeline.clock.now)), address: `192.0.2.${10 + i}` }))
    const health: { status: number; waitedFor: number }[] = []
    let reading = true
    const { result: parts, statements } = await statementsOf(async (noted) => {
      const asking = (async () => {
        while (reading) {
          const before = ofHistory(noted).length
          const response = await pipeline.app.inject({ url: '/health' })
          health.push({ status: response.statusCode, waitedFor: ofHistory(noted).length - before })
          await new Promise((resolve) => setImmediate(resolve))
        }
      })()
      const read = await Promise.all(
        clients.map(async ({ token, address }) => {
          const statuses: number[] = []
          let next: string | null = `/v1/event-tracer/history/${EVENT}`
          for (let part = 0; part < 20 && next !== null; part++) {
            const response = await pipeline.app.inject({ url: next, headers: { authorization: token }, remoteAddress: address })
            statuses.push(response.statusCode)
            next = nextOf(response.headers.link)
          }
          return statuses
        })
      )
      reading = false
      await asking
      return read
    })
    t.strictSame(parts.flat().filter((status) => status !== 200), [], `every part of the ${parts.flat().length} read answered 200: ten clients are within every share`)
    t.strictSame(bounded(ofHistory(statements)), [], 'every statement is cut to a part of the history')
    t.ok(ofHistory(statements).every((statement) => statement.rows <= PART + 1), 'none gives more than a part and one')
    t.ok(health.length > 0 && health.every((answer) => answer.status === 200), `/health answered each of ${health.length} times`)
    const waited = Math.max(...health.map((answer) => answer.waitedFor))
    // The queue gives reads at once for 20 ms in 50, then one a round of the event loop: /health waits for a few parts at most.
    t.ok(waited <= 20 * STATEMENTS_A_PART, `/health waited for ${waited} statements of history reads at most, each a bounded part`)
  })

  t.test('the service’s own links walk it whole: every transition once, in order, each part the same few bounded statements', async (t) => {
    let next: string | null = `/v1/event-tracer/history/${EVENT}`
    let parts = 0
    let read = 0
    let last: Transition | undefined
    let inOrder = true
    let worst = { statements: 0, rows: 0 }
    const faults = new Set<string>()
    while (next !== null) {
      const url: string = next
      const { result: response, statements } = await statementsOf(() => get(pipeline.app, url, pipeline.reader))
      if (response.statusCode !== 200) faults.add(`${url}: ${response.statusCode}`)
      const transitions = response.json<{ transitions: Transition[] }>().transitions
      for (const transition of transitions) {
        if (last !== undefined && transition.at < last.at) inOrder = false
        last = transition
      }
      read += transitions.length
      parts++
      const history = ofHistory(statements)
      worst = { statements: Math.max(worst.statements, history.length), rows: Math.max(worst.rows, history.reduce((sum, statement) => sum + statement.rows, 0)) }
      for (const fault of bounded(history)) faults.add(fault)
      next = nextOf(response.headers.link)
    }
    t.strictSame([...faults], [], 'every part answered, by bounded statements')
    t.equal(read, total, 'every transition once')
    t.equal(parts, Math.ceil(total / PART), 'in parts of a thousand')
    t.ok(inOrder, 'oldest first')
    t.ok(worst.statements <= STATEMENTS_A_PART, `at most ${worst.statements} statements a part, the first as the last`)
    t.ok(worst.rows <= ROWS_A_PART, `at most ${worst.rows} rows a part, of ${total}`)
  })
})
