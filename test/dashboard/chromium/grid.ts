import t from 'tap'
import { dashboardPage, eventGroup, stageCellOf } from './context.js'

const STAGES = ['baseband_callback_request', 'baseband_conversion', 'data_registration', 'data_replication_to_minoc'] as const
const WORDS = { complete: 'complete', in_progress: 'in progress', stuck: 'stuck', contradiction: 'contradiction' } as const

t.test('the demo’s last 24 hours: every audited event, its verdict and each stage’s state in words', async (t) => {
  const { page, report, traces } = await dashboardPage(t)
  const window = Date.parse(report.window.end_time_utc) - Date.parse(report.window.start_time_utc)
  t.equal(window, 86_400_000, 'the default window is the last 24 hours')
  t.ok(report.events.length > 0, `${report.events.length} events`)
  t.ok(report.summary.stuck > 0, 'the demo has stuck events in its last day')

  const tiles = await page.locator('.tile').allInnerTexts()
  t.strictSame(
    tiles.map((text) => text.replace(/\s+/g, ' ').trim()),
    [
      `${report.summary.events} all events`,
      `${report.summary.contradiction} ✕ contradiction`,
      `${report.summary.stuck} ▲ stuck`,
      `${report.summary.in_progress} ○ in progress`,
      `${report.summary.complete} ✓ complete`
    ],
    'the summary counts'
  )
  t.equal(await page.locator('tbody.event').count(), report.events.length, 'one row group per event')

  for (const event of report.events) {
    const group = eventGroup(page, event.event_no)
    t.equal(await group.locator('tr').count(), event.sites.length, `event ${event.event_no}: a row per requested site`)
    t.match(await group.locator('td.verdict').innerText(), WORDS[event.verdict], `event ${event.event_no} is ${event.verdict} in words`)
    const trace = (traces.get(event.event_no) ?? {}) as Record<string, unknown>
    for (const site of event.sites) {
      for (const stage of STAGES) {
        const named = event.findings.filter((finding) => finding.site === site && finding.stage === stage)
        const expected = named.some((f) => f.severity === 'contradiction')
          ? 'contradiction'
          : named.some((f) => f.severity === 'stuck')
            ? 'stuck'
            : trace[`stages/${stage}/sites/${site}`] === 'complete'
              ? 'complete'
              : 'in_progress'
        const cell = stageCellOf(page, event.event_no, site, stage)
        t.equal((await cell.innerText()).replace(/^\S+\s/, ''), WORDS[expected], `${event.event_no} ${site} ${stage}`)
        t.equal(await cell.getAttribute('class').then((c) => c?.includes(`state-${expected}`)), true, 'and its colour')
      }
    }
  }
})

t.test('a cell’s findings show on hover and on focus, and are its accessible description', async (t) => {
  const { page, report } = await dashboardPage(t)
  const event = report.events.find((candidate) => candidate.findings.some((f) => f.site !== null && f.stage !== 'tsar_classification'))!
  const finding = event.findings.find((f) => f.site !== null && f.stage !== 'tsar_classification')!
  const cell = stageCellOf(page, event.event_no, finding.site!, finding.stage!)
  const description = await page.locator(`#${await cell.getAttribute('aria-describedby')}`).textContent()
  t.match(description, finding.detail, 'the accessible description holds the finding')

  // Wherever the pointer was left by the login, away from the grid first.
  await page.mouse.move(0, 0)
  await page.locator('.tooltip').waitFor({ state: 'detached' })
  await cell.hover()
  t.match(await page.locator('.tooltip').innerText(), finding.detail, 'on hover')
  await page.mouse.move(0, 0)
  await page.locator('.tooltip').waitFor({ state: 'detached' })

  await cell.focus()
  t.match(await page.locator('.tooltip').innerText(), finding.detail, 'on focus')
  await page.keyboard.press('Escape')
  await page.locator('.tooltip').waitFor({ state: 'detached' })
  t.pass('Escape dismisses it')
})
