import { mkdirSync } from 'node:fs'
import t from 'tap'
import type { AuditedEvent, TraceHistory } from '../page-types.js'
import { updateTrace } from '../fixture.js'
import { dashboardPage, focusedCell, server, stageCellOf } from './context.js'
import { boxesOf, shownInside, within } from './geometry.js'
import { apiGet, pick, STAGES, statusOf, traceValue } from './pick.js'

t.test('an event’s panel: its status, findings and history; Escape closes it and gives the focus back', async (t) => {
  const { page, report } = await dashboardPage(t)
  // An event with findings and a trace, whose conversion at a site the pipeline now completes (undoing
  // it first when it is complete already): a transition to show, whatever the demo made of it.
  const { event, site, status: before } = await pick(report, (candidate, _at, status) => candidate.findings.length > 0 && status.trace.update_timestamp > 0)
  if (traceValue(before, STAGES[1], site) !== 'incomplete') {
    await updateTrace(server, { event: event.event_no, site, stage: STAGES[1], status: 'incomplete' })
  }
  await updateTrace(server, { event: event.event_no, site, stage: STAGES[1], status: 'complete' })
  await stageCellOf(page, event.event_no, site, STAGES[1]).filter({ hasNotText: 'in progress' }).filter({ hasNotText: 'stuck' }).waitFor()

  const cell = page.locator(`[data-cell="${event.event_no}:event"]`)
  await cell.click()
  const panel = page.getByRole('complementary', { name: `Event ${event.event_no}` })
  await panel.getByRole('heading', { name: /^History/ }).waitFor()
  t.equal(await page.evaluate('document.activeElement?.textContent'), `Event ${event.event_no}`, 'the focus moves to the panel')

  const [audit, status, history] = await Promise.all([
    apiGet<AuditedEvent>(`/v1/event-tracer/audit/${event.event_no}`),
    statusOf(event.event_no),
    apiGet<TraceHistory>(`/v1/event-tracer/history/${event.event_no}`)
  ])
  t.equal(await panel.getByRole('heading', { name: /^Findings/ }).innerText(), `Findings (${audit.findings.length})`)
  const items = await panel.locator('.findings li').allInnerTexts()
  t.equal(items.length, audit.findings.length)
  audit.findings.forEach((finding, index) => t.match(items[index], finding.detail, `finding ${index + 1}`))
  t.match(await panel.locator('.panel-facts').innerText(), `classification: ${status.tsar_classification}`)
  t.equal(await panel.locator('section:has(#sites-title) tbody tr').count(), audit.sites.length, 'a row of stages per requested site')
  t.equal(await panel.getByRole('heading', { name: /^Heartbeats/ }).innerText(), `Heartbeats (${status.heartbeats.length})`)
  t.equal(await panel.getByRole('heading', { name: /^History/ }).innerText(), `History (${history.transitions.length})`)
  t.match(await panel.locator('.timeline').innerText(), new RegExp(`${site} · Conversion\\s+incomplete → complete by pipeline`))

  await page.keyboard.press('Escape')
  await panel.waitFor({ state: 'detached' })
  t.equal(await focusedCell(page), `${event.event_no}:event`, 'the focus is back where it was')
})

t.test('1440 px: the open panel covers nothing of the page, fits its own tables, and leads with the stages', async (t) => {
  const size = { width: 1440, height: 900 }
  const { page, report } = await dashboardPage(t, size)
  // The widest panel the window has: the most sites, with heartbeats when there are some.
  const candidates = await Promise.all(report.events.map(async (event) => ({ event, status: await statusOf(event.event_no) })))
  const weight = ({ event, status }: (typeof candidates)[number]) => event.sites.length * 10 + Math.min(status.heartbeats.length, 9)
  const { event } = candidates.reduce((best, candidate) => (weight(candidate) > weight(best) ? candidate : best))
  await page.locator(`[data-cell="${event.event_no}:event"]`).click()
  const panel = page.getByRole('complementary', { name: `Event ${event.event_no}` })
  await panel.getByRole('heading', { name: /^History/ }).waitFor()
  await page.locator('.latency').scrollIntoViewIfNeeded()

  const panelBox = (await panel.boundingBox())!
  const content = (await page.locator('main.content').boundingBox())!
  t.ok(content.x + content.width <= panelBox.x + 0.5, `the content ends (${content.x + content.width} px) where the panel begins (${panelBox.x} px)`)
  const underPanel = (await boxesOf(page, 'main.content :is(.toolbar, .summary, .legend, .grid-frame, .latency-figure, .latency-table th, .latency-table td)'))
    .filter((box) => box.width > 0 && !within(box, content))
    .map((box) => box.what)
  t.strictSame(underPanel, [], 'the toolbar, filters, legend, grid and every cell of the stage-latency table lie inside the content, none under the panel')
  const latencyFrame = (await page.locator('.latency .table-frame').boundingBox())!
  const clipped = (await boxesOf(page, '.latency-table :is(th, td)')).filter((box) => !within(box, latencyFrame)).map((box) => box.what)
  t.strictSame(clipped, [], 'the stage-latency table shows every column: none scrolled out of its frame')

  const inner = await panel.evaluate((element) => ({ left: element.getBoundingClientRect().left, width: element.clientWidth }))
  const panelInner = { x: inner.left, y: -1e9, width: inner.width, height: 2e9 }
  const cut = (await boxesOf(page, '.panel table :is(th, td)')).filter((box) => !within(box, panelInner)).map((box) => box.what)
  t.ok((await page.locator('.panel table td').count()) > 0, 'the panel has its tables')
  t.strictSame(cut, [], 'every cell of the panel’s tables lies within the panel: none cut off at its edge')

  const order = await panel.evaluate((element) => {
    const stages = element.querySelector('#sites-title')
    const findings = element.querySelector('#findings-title')
    // 4: Node.DOCUMENT_POSITION_FOLLOWING
    return stages !== null && findings !== null && (stages.compareDocumentPosition(findings) & 4) !== 0
  })
  t.ok(order, 'the stages (what is wrong where) come before the findings')
  mkdirSync('.tap/screenshots', { recursive: true })
  await page.screenshot({ path: '.tap/screenshots/dashboard-panel-1440.png' })
})

t.test('1440 px with the panel open: the Verdict column stays in view over the columns that scroll', async (t) => {
  const size = { width: 1440, height: 900 }
  const { page } = await dashboardPage(t, size)
  // The grid's first event, so that its heading row is in view too.
  const first = page.locator('th.event-no').first()
  const event_no = Number(await first.getAttribute('data-event'))
  await first.click()
  await page.getByRole('complementary', { name: `Event ${event_no}` }).getByRole('heading', { name: /^History/ }).waitFor()
  const frame = page.locator('.grid-frame')
  t.ok(await shownInside(page.getByRole('columnheader', { name: 'Verdict' }), frame, size), 'the Verdict heading is in view')
  const verdict = page.locator(`td.verdict[data-cell="${event_no}:verdict"]`)
  t.ok(await shownInside(verdict, frame, size), `event ${event_no}: its verdict is in view`)
  const uncovered = await page.evaluate<boolean>(`(() => {
    const element = document.querySelector('td.verdict[data-cell="${event_no}:verdict"]')
    const box = element.getBoundingClientRect()
    const hit = document.elementFromPoint(box.x + box.width / 2, box.y + box.height / 2)
    return hit !== null && element.contains(hit)
  })()`)
  t.ok(uncovered, 'and nothing covers it')
})
