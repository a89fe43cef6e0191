import t from 'tap'
import type { AuditedEvent, TraceHistory } from '../page-types.js'
import { updateTrace } from '../fixture.js'
import { dashboardPage, focusedCell, server, stageCellOf } from './context.js'
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
