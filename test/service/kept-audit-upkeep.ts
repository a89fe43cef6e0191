import { openKeptDatabase } from '../../src/store/sqlite/native-lifetimes.js'
import { setTimeout as pause } from 'node:timers/promises'
import t, { type Test } from 'tap'
import { buildApp } from '../../src/app.js'
import { toEventRecord } from '../../src/domain/events.js'
import { VERIFY_EVERY_MS, VERIFY_PAGE, VERIFY_PASS_MS, VERIFY_YIELD_MS, loopBusy, type KeptAuditUpkeepOptions } from '../../src/kept-audit/upkeep.js'
import { openSqliteStore } from '../../src/store/sqlite/store.js'
import { STAGES, stageKey } from '../../src/vocabulary.js'
import { testConfig, userWithTokens } from '../helper.js'

const NOW = Date.parse('2026-03-01T12:00:00Z')
const HOUR = 3_600_000

/**
 * The app on a fresh SQLite file, with a clock the test moves and an upkeep as quick as the test
 * needs. Its verifier never gives way to a busy loop unless the test asks: a test's own loop is busy.
 */
async function upkeepApp(t: Test, upkeep: KeptAuditUpkeepOptions) {
  const config = testConfig(t, { STAGE_DEADLINES: 'tsar_classification=1h' })
  const clock = { now: NOW }
  // The store looks with the app's clock too, as it does in production (both Date.now).
  const store = openSqliteStore(config.TRACER_DB, config.TRACER_SITES, { deadlines: config.STAGE_DEADLINES, now: () => clock.now })
  const app = await buildApp({ config, store, now: () => clock.now, keptAuditUpkeep: { verifyYieldMs: 0, ...upkeep } })
  t.teardown(() => app.close())
  const event = (event_no: number, ago: number) =>
    toEventRecord(
      { event_no, timestamp_utc: new Date(NOW - ago).toISOString(), snr: 10, known_source_name: 'EXT', actions: { want: { baseband: true }, got: {} } },
      config.TRACER_SITES,
      1
    )
  /** Another program's write into the same file, on a connection of its own. */
  const tamper = (sql: string, ...values: unknown[]) => {
    const db = openKeptDatabase(config.TRACER_DB)
    try {
      db.prepare(sql).run(...values)
    } finally {
      db.close()
    }
  }
  const metric = async (series: string) => {
    const text = (await app.inject({ url: '/metrics' })).body
    const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `))
    return line === undefined ? undefined : Number(line.slice(series.length + 1))
  }
  /** Polls until `done` holds: the upkeep runs on its own timers, so the test waits for what it does, not for a time. */
  const until = async (done: () => Promise<boolean>) => {
    while (!(await done())) await pause(5)
  }
  return { app, clock, event, tamper, metric, until }
}

t.test('the running verifier finds a kept row that serves a wrong verdict, repairs it, counts it, and says when its pass ended', async (t) => {
  const { app, event, tamper, metric, until } = await upkeepApp(t, { verifyEveryMs: 5, verifyPage: 2, verifyPassMs: 0 })
  const { access_token: token } = await userWithTokens(app, 'ana')
  await app.store.events.upsert([event(1, 3 * HOUR), event(2, 3 * HOUR), event(3, 10 * 60_000)])
  for (const eventNo of [1, 2]) {
    await app.store.traces.setStatus(eventNo, 'stages/tsar_classification', 'complete', NOW / 1000 - 600, 'w')
    for (const stage of STAGES) await app.store.traces.setStatus(eventNo, stageKey(stage, 'chime'), 'complete', NOW / 1000 - 600, 'w')
  }
  await app.store.datatrail.put([{ event_no: 1, member: 'baseband', value: { registered: true, num_files: 2, missing_files: ['f1'] }, update_timestamp: NOW / 1000 }])
  await app.store.datatrail.put([{ event_no: 2, member: 'baseband', value: { registered: true, num_files: 2, missing_files: [] }, update_timestamp: NOW / 1000 }])
  await until(async () => (await metric('tracer_audit_verify_last_pass_rows')) === 3)
  t.equal(await metric('tracer_audit_verify_last_pass_end_timestamp_seconds'), NOW / 1000, 'the pass ended at the app’s clock')
  t.equal(await metric('tracer_audit_mismatches_total'), 0)

  // As the finding has it: the kept row of the contradictory event made to say complete.
  tamper(`UPDATE audits SET verdict = 'complete', fixed = json_set(fixed, '$.verdict', 'complete', '$.findings', json('[]')) WHERE event_no = 1`)
  await until(async () => (await metric('tracer_audit_mismatches_total')) === 1)
  const window = `start_time_utc=${new Date(NOW - 4 * HOUR).toISOString()}&end_time_utc=${new Date(NOW).toISOString()}`
  const audit = await app.inject({ url: `/v1/event-tracer/audit?${window}`, headers: { authorization: `Bearer ${token}` } })
  t.equal(audit.statusCode, 200)
  t.strictSame(
    audit.json<{ events: { event_no: number; verdict: string }[] }>().events.map(({ event_no, verdict }) => [event_no, verdict]),
    [
      [1, 'contradiction'],
      [2, 'complete'],
      [3, 'in_progress']
    ],
    'the window serves the records’ verdict again'
  )
})

t.test('the running service finds kept columns edited by hand, repairs and counts each, and every route serves the records again', async (t) => {
  const { app, event, tamper, metric, until } = await upkeepApp(t, { verifyEveryMs: 5, verifyPage: 2, verifyPassMs: 0, marksCheckMs: 5 })
  const { access_token: token } = await userWithTokens(app, 'ana')
  await app.store.events.upsert([event(1, 10 * 60_000), event(2, 10 * 60_000), event(3, 10 * 60_000)])
  await app.store.traces.setStatus(2, 'stages/tsar_classification', 'complete', NOW / 1000 - 600, 'w')
  await until(async () => (await metric('tracer_audit_verify_last_pass_rows')) === 3)
  const window = `start_time_utc=${new Date(NOW - HOUR).toISOString()}&end_time_utc=${new Date(NOW).toISOString()}`
  const read = async () => {
    const get = async (url: string) => (await app.inject({ url, headers: { authorization: `Bearer ${token}` } })).json<unknown>()
    return {
      list: await get(`/v1/events?${window}&order=asc`),
      one: await get('/v1/events/1'),
      callbacks: await get(`/v1/event-tracer/baseband-callbacks?${window}`),
      audit: await get(`/v1/event-tracer/audit?${window}`)
    }
  }
  const right = await read()
  t.equal(await metric('tracer_audit_mismatches_total'), 0)

  // As the finding has it: the list's source name forged, the baseband flag cleared, a trace's text changed.
  tamper(`UPDATE events SET output = json_set(output, '$.known_source_name', 'FORGED-EXT') WHERE event_no = 1`)
  tamper('UPDATE events SET baseband_requested = 0 WHERE event_no = 2')
  tamper(`UPDATE traces SET output = json_set(output, '$."stages/tsar_classification"', 'incomplete') WHERE event_no = 2`)
  await until(async () => (await metric('tracer_audit_mismatches_total')) === 3)
  const { audit, ...served } = await read()
  const { generated_at: _at, ...report } = audit as { generated_at: string }
  const { generated_at: _before, ...reportBefore } = right.audit as { generated_at: string }
  t.strictSame(served, { list: right.list, one: right.one, callbacks: right.callbacks }, 'the list, the event and the callbacks serve the records again')
  t.strictSame(report, reportBefore, 'and the audit still holds the event whose flag was cleared')
  t.equal(await metric('tracer_audit_mismatches_total'), 3, 'each column counted once')
})

t.test('an edit of a kept text that no trigger marked is found by the pass that holds the texts', async (t) => {
  const { app, event, tamper, metric, until } = await upkeepApp(t, { verifyEveryMs: 5, verifyPage: 2, verifyPassMs: 0, marksCheckMs: HOUR, verifyTextsEvery: 3 })
  await app.store.events.upsert([event(1, 10 * 60_000), event(2, 10 * 60_000), event(3, 10 * 60_000)])
  await until(async () => (await metric('tracer_audit_verify_last_pass_rows')) === 3)
  tamper(`UPDATE events SET output = json_set(output, '$.known_source_name', 'FORGED-EXT') WHERE event_no = 1`)
  // What an edit made with the triggers dropped leaves: no mark, so only the verifier can find it.
  tamper('DELETE FROM audit_marks')
  await until(async () => (await metric('tracer_audit_mismatches_total')) === 1)
  t.equal((await app.store.events.find(1))?.known_source_name, 'EXT')
  const listed = (await app.store.events.page({ window: { start: NOW - HOUR, end: NOW }, order: 'asc', limit: 10 })).map((row) => JSON.parse(row.json) as { known_source_name: string })
  t.strictSame(listed.map((row) => row.known_source_name), ['EXT', 'EXT', 'EXT'], 'the list serves the records again')
})

t.test('a row the deadline check cannot read holds back no other event, and is repaired', async (t) => {
  const { app, clock, event, tamper, metric, until } = await upkeepApp(t, { deadlineCheckMs: 5 })
  await app.store.events.upsert([event(1, 0), event(2, 0), event(3, 0)])
  await app.ready()
  tamper(`UPDATE audits SET facts = 'not json' WHERE event_no = 2`)
  clock.now = NOW + HOUR
  await until(async () => (await app.store.audits.find(3))?.look.verdict === 'stuck')
  t.equal((await app.store.audits.find(1))?.look.verdict, 'stuck', 'the events beside it turned stuck on time')
  await until(async () => (await metric('tracer_audit_mismatches_total')) === 1)
  t.equal((await app.store.audits.find(2))?.look.verdict, 'stuck', 'the unreadable row is made again from its records')
})

t.test('a write another program makes straight into the file is in the kept audit within the marks check, not at the next sweep', async (t) => {
  // No verifier pass within the test: only the marks can bring the write in.
  const { app, tamper, event, metric, until } = await upkeepApp(t, { marksCheckMs: 5, verifyEveryMs: 3_600_000 })
  await app.store.events.upsert([event(1, 10 * 60_000)])
  await app.ready()
  t.equal((await app.store.audits.find(1))?.look.verdict, 'in_progress')
  // As an older version of the service would, which keeps no audit: registration complete before
  // the stages that come first, a contradiction.
  tamper(`INSERT INTO traces (event_no, doc) VALUES (1, '{"event_no":1,"stages/data_registration/sites/chime":"complete"}')`)
  await until(async () => (await app.store.audits.find(1))?.look.verdict === 'contradiction')
  t.equal(await metric('tracer_audit_foreign_writes_total'), 1, 'counted as another program’s write')
  t.equal(await metric('tracer_audit_mismatches_total'), 0, 'not as a fault of the kept audit')
})

t.test('a full pass over a million kept audits takes under an hour at the verifier’s pace, however long it gave way to requests', async (t) => {
  t.ok(((3_600_000 - VERIFY_YIELD_MS) / VERIFY_EVERY_MS) * VERIFY_PAGE >= 1_000_000, `${VERIFY_PAGE} every ${VERIFY_EVERY_MS} ms at the fastest, ${VERIFY_YIELD_MS / 60_000} minutes behind`)
  t.ok(VERIFY_PASS_MS + VERIFY_YIELD_MS <= 3_600_000, 'a smaller store is spaced to a pass within the hour')
})

t.test('the verifier gives way while the event loop is busy, and checks again once it is free', async (t) => {
  const loop = { busy: true, looks: 0 }
  const busy = () => {
    loop.looks++
    return loop.busy
  }
  const { app, event, metric, until } = await upkeepApp(t, { verifyEveryMs: 1, verifyPage: 1, verifyPassMs: 0, verifyYieldMs: 3_600_000, busy })
  await app.store.events.upsert([event(1, 0), event(2, 0), event(3, 0)])
  await until(async () => loop.looks >= 20 || (await metric('tracer_audit_verify_pass_rows'))! > 0)
  t.equal(await metric('tracer_audit_verify_pass_rows'), 0, `no row checked in ${loop.looks} looks at a busy loop`)
  loop.busy = false
  await until(async () => (await metric('tracer_audit_verify_last_pass_rows')) === 3)
  t.pass('the pass ended once the loop was free')
})

/** The verifier's looks at the loop, which always finds it busy, and the pages it ran: a page ends in the same turn as its look. */
async function alwaysBusy(t: Test, verifyYieldMs: number) {
  const counts = { looks: 0, pages: 0 }
  const setup = await upkeepApp(t, { verifyEveryMs: 1, verifyPage: 1, verifyPassMs: 0, verifyYieldMs, busy: () => (counts.looks++, true) })
  setup.app.store.observe((operation) => {
    if (operation === 'audits.verify') counts.pages++
  })
  await setup.app.store.events.upsert([setup.event(1, 0), setup.event(2, 0), setup.event(3, 0)])
  await setup.until(async () => (await setup.metric('tracer_audit_verify_last_pass_rows')) === 3)
  return counts
}

t.test('a pass that has given way as far as it may runs its pages while the loop stays busy', async (t) => {
  // A pass may fall 20 ms behind by giving way: its first look, on schedule, is put off; later ones run.
  const { looks, pages } = await alwaysBusy(t, 20)
  t.ok(pages >= 4 && looks > pages, `the pass ended under a loop busy throughout: ${pages} pages in ${looks} looks, some put off`)
})

t.test('a verifier that may not fall behind never gives way', async (t) => {
  const { looks, pages } = await alwaysBusy(t, 0)
  t.ok(pages >= 4, `the pass ended (${pages} pages)`)
  t.equal(looks, pages, 'every look ran a page')
})

t.test('the loop is busy when it spent more than half its time since the last look running, and not when it waited', async (t) => {
  // The loop's running totals of busy and idle time, in ms, as the test sets them.
  const totals = { active: 0, idle: 0 }
  const busy = loopBusy(() => ({ ...totals }))
  totals.active += 30
  t.equal(busy(), true, '30 ms running, none waiting')
  totals.active += 10
  totals.idle += 50
  t.equal(busy(), false, '10 ms running, 50 waiting')
  totals.active += 26
  totals.idle += 25
  t.equal(busy(), true, 'a little more running than waiting')
  totals.active += 25
  totals.idle += 25
  t.equal(busy(), false, 'half of each')
  t.equal(busy(), false, 'no time at all')
  const real = loopBusy()
  const until = performance.now() + 30
  while (performance.now() < until) {
    // Running, not waiting: the event loop's own totals count the stretch busy.
  }
  t.equal(real(), true, 'the event loop itself, after 30 ms of running')
})

t.test('a small store’s pass is spaced out, and still ends', async (t) => {
  // Three rows, a pass meant to take 30 ms: a page of one every 10 ms.
  const { app, event, metric, until } = await upkeepApp(t, { verifyEveryMs: 1, verifyPage: 1, verifyPassMs: 30 })
  await app.store.events.upsert([event(1, 0), event(2, 0), event(3, 0)])
  await until(async () => (await metric('tracer_audit_verify_last_pass_rows')) === 3)
  t.pass('the pass ended')
})
