import t from 'tap'
import { toEventRecord } from '../../../src/domain/events.js'
import { updateTrace } from '../fixture.js'
import { dashboardPage, eventGroup, server, stageCellOf } from './context.js'
import { memberOf, pick, STAGES, traceValue } from './pick.js'

const LIVE_MS = 2000

t.test('a write through the API changes its cell within 2 s, without navigation', async (t) => {
  const { page, report } = await dashboardPage(t)
  let navigations = 0
  page.on('framenavigated', (frame) => void (frame === page.mainFrame() && navigations++))
  await page.evaluate('window.sameDocument = true')
  const { event, site } = await pick(report, (_event, at, status) => traceValue(status, STAGES[0], at) !== 'complete')
  const cell = stageCellOf(page, event.event_no, site, STAGES[0])
  t.notMatch(await cell.innerText(), /✓ complete/)

  const written = Date.now()
  await updateTrace(server, { event: event.event_no, site, stage: STAGES[0], status: 'complete' })
  await cell.filter({ hasText: '✓ complete' }).waitFor({ timeout: LIVE_MS })
  t.ok(Date.now() - written < LIVE_MS, `shown ${Date.now() - written} ms after the write`)
  t.equal(navigations, 0, 'no navigation')
  t.equal(await page.evaluate('window.sameDocument'), true, 'the same document')
})

t.test('a contradiction written by the pipeline turns the event’s verdict within 2 s', async (t) => {
  const { page, report } = await dashboardPage(t)
  const { event, site } = await pick(
    report,
    (candidate, at, status) =>
      candidate.verdict !== 'contradiction' && traceValue(status, STAGES[2], at) !== 'complete' && memberOf(status, at)?.registered !== true
  )
  const verdict = eventGroup(page, event.event_no).locator('td.verdict')
  const tile = page.locator('.tile-contradiction .count')
  const before = Number(await tile.innerText())

  // Registered in the trace, not in the datatrail: two records disagree.
  await updateTrace(server, { event: event.event_no, site, stage: STAGES[2], status: 'complete' })
  await verdict.filter({ hasText: 'contradiction' }).waitFor({ timeout: LIVE_MS })
  t.match(await stageCellOf(page, event.event_no, site, STAGES[2]).innerText(), 'contradiction')
  t.equal(Number(await tile.innerText()), before + 1, 'the summary counts it')
})

t.test('an event whose deadline passes turns stuck in the grid within 2 s, with no write and no read of the window', async (t) => {
  const { page } = await dashboardPage(t)
  const windowReads: string[] = []
  page.on('request', (request) => void (request.url().includes('/v1/event-tracer/audit?') && windowReads.push(request.url())))
  // An event whose callback request (deadline 15 min) falls due ten minutes from now; it joins the
  // grid by the window read its arrival on the stream asks for.
  const deadline = Date.now() + 10 * 60_000
  const eventNo = 990_001
  const input = { event_no: eventNo, timestamp_utc: new Date(deadline - 15 * 60_000).toISOString(), snr: 30, known_source_name: 'EXT', actions: { want: { baseband: true }, got: {} } }
  await server.app.store.events.upsert([toEventRecord(input, server.config.TRACER_SITES, Date.now() / 1000)])
  const verdict = eventGroup(page, eventNo).locator('td.verdict')
  await verdict.filter({ hasText: 'in progress' }).waitFor({ timeout: LIVE_MS + 1000 })
  const readsBefore = windowReads.length

  // The deadline passes on the app's clock (what its deadline check reads), not by waiting for it.
  t.teardown(() => void (server.clock.aheadMs = 0))
  server.clock.aheadMs = deadline - Date.now()
  const passed = Date.now()
  await verdict.filter({ hasText: 'stuck' }).waitFor({ timeout: LIVE_MS })
  t.ok(Date.now() - passed < LIVE_MS, `stuck in the grid ${Date.now() - passed} ms after the deadline`)
  t.equal(windowReads.length, readsBefore, 'without reading the window again: the verdict change came on the stream')
  t.match(await stageCellOf(page, eventNo, 'chime', STAGES[0]).innerText(), 'stuck')

  // The clock set back, the stuck verdict is taken back, on the stream too: the suites after this one see the demo as it was.
  server.clock.aheadMs = 0
  await verdict.filter({ hasText: 'in progress' }).waitFor()
  t.equal(windowReads.length, readsBefore, 'in progress again, still without reading the window')
})
