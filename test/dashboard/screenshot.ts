/**
 * `npm run screenshot`: regenerates docs/dashboard.png, the README's picture of the dashboard, from
 * the demo data set of a first start. The pipeline then completes the next stage at each site of
 * the window's first eight events through the API, some of them against what the datatrail says, so the
 * stage-latency chart, an event's history and the contradiction state all have something to show.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AuditReport } from './page-types.js'
import { INSTALL_HINT, chromiumInstalled, launchChromium, logIn, watchedPage } from './browser.js'
import { OPERATOR, startDashboardServer, updateTrace, type DashboardServer } from './fixture.js'
import { STAGES, stageKey } from '../../src/vocabulary.js'

const OUTPUT = process.argv[2] ?? 'docs/dashboard.png'

/** The first incomplete stage of each requested site of the window's first events, completed. */
async function catchUp(server: DashboardServer, events: number) {
  const day = `start_time_utc=${new Date(Date.now() - 86_400_000).toISOString()}&end_time_utc=${new Date().toISOString()}`
  const headers = { authorization: server.writerToken }
  const report = (await (await fetch(`${server.url}/v1/event-tracer/audit?${day}`, { headers })).json()) as AuditReport
  for (const event of report.events.slice(0, events)) {
    const status = (await (await fetch(`${server.url}/v1/event-tracer/event-status/${event.event_no}`, { headers })).json()) as {
      trace: Record<string, unknown>
    }
    for (const site of event.sites) {
      const stage = STAGES.find((candidate) => status.trace[stageKey(candidate, site)] !== 'complete')
      if (stage !== undefined) await updateTrace(server, { event: event.event_no, site, stage, status: 'complete' })
    }
  }
}

async function main() {
  if (!chromiumInstalled()) throw new Error(INSTALL_HINT)
  const dir = await mkdtemp(join(tmpdir(), 'frb-dashboard-'))
  const server = await startDashboardServer(dir, Date.now())
  const browser = await launchChromium()
  try {
    await catchUp(server, 8)
    // Tall enough to hold the whole grid: hovering a cell below a shorter window scrolls the page,
    // and a full-page picture then shows the sticky header and panel in the middle of it.
    const { page, problems } = await watchedPage(browser, { width: 1600, height: 2100 })
    await logIn(page, server.url, OPERATOR.username, OPERATOR.password)
    await page.locator('.stream-live').waitFor()
    // The side panel shows the worst event: a contradiction if there is one, else a stuck one.
    const worst = page.locator('tbody.event').filter({ has: page.locator('td.verdict.state-contradiction, td.verdict.state-stuck') })
    await worst.first().locator('th.event-no').click()
    await page.getByRole('heading', { name: /^History/ }).waitFor()
    await page.locator('td.state-stuck[data-cell$=":baseband_conversion"]').last().hover()
    await page.locator('.tooltip').waitFor()
    await page.screenshot({ path: OUTPUT, fullPage: true })
    const seen = [...problems.console, ...problems.uncaught, ...problems.csp]
    if (seen.length > 0) throw new Error(`the page reported problems:\n${seen.join('\n')}`)
    process.stdout.write(`Wrote ${OUTPUT}\n`)
  } finally {
    await browser.close()
    await server.close()
    await rm(dir, { recursive: true, force: true })
  }
}

await main()
