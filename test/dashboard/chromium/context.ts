import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page, Response } from 'playwright-core'
import t, { type Test } from 'tap'
import { launchChromium, logIn, watchedPage, type PageProblems } from '../browser.js'
import { OPERATOR, startDashboardServer } from '../fixture.js'
import type { AuditReport, BasebandCallback } from '../page-types.js'

/** The demo's `now`: fixed for the run, so every suite sees the same data set relative to it. */
export const NOW = Date.now()
const dir = mkdtempSync(join(tmpdir(), 'frb-dashboard-test-'))
export const server = await startDashboardServer(dir, NOW)
export const browser = await launchChromium()
t.teardown(async () => {
  await browser.close()
  await server.close()
  rmSync(dir, { recursive: true, force: true })
})

/** Problems of every page the suites opened, checked at the end (quality.ts). */
export const allProblems: PageProblems[] = []

export interface PageOptions {
  width?: number
  height?: number
  /**
   * The test stops the service under the page, whose failed requests Chromium logs as console
   * errors: the test checks that page's problems itself instead of leaving them to quality.ts.
   */
  serviceStops?: boolean
}

/** A page of its own (closed when `t` ends) whose problems are checked at the end. */
export async function openPage(t: Test, options: PageOptions = {}) {
  const watched = await watchedPage(browser, options)
  if (options.serviceStops !== true) allProblems.push(watched.problems)
  watched.page.setDefaultTimeout(15_000)
  t.teardown(() => watched.close())
  return watched
}

/**
 * A logged-in page showing the default window, with the audit report and traces it shows. The page
 * reads the window when it opens and again once the live stream is connected (transitions written
 * in between would be missed otherwise): this waits for both, so that from here on only the
 * stream can change what the page shows.
 */
export async function dashboardPage(t: Test, options: PageOptions = {}) {
  const watched = await openPage(t, options)
  const { page } = watched
  const secondRead = (part: string) =>
    new Promise<Response>((resolve) => {
      let seen = 0
      page.on('response', (response) => void (response.url().includes(part) && ++seen === 2 && resolve(response)))
    })
  const audit = secondRead('/v1/event-tracer/audit?')
  const callbacks = secondRead('/v1/event-tracer/baseband-callbacks?')
  await logIn(page, server.url, OPERATOR.username, OPERATOR.password)
  await page.locator('.stream-live').waitFor()
  const report = (await (await audit).json()) as AuditReport
  const traces = new Map(((await (await callbacks).json()) as BasebandCallback[]).map((callback) => [callback.event_no, callback.trace]))
  // The second read is drawn once its three answers are in: the audited-at time is the report's.
  await page.locator('.as-of').filter({ hasText: `audited at ${report.generated_at.slice(0, 19).replace('T', ' ')}` }).waitFor()
  return { ...watched, report, traces }
}

/** The JSON of the next response whose URL contains `part`. */
export async function nextJson<T>(page: Page, part: string, action: () => Promise<unknown>): Promise<T> {
  const response: Promise<Response> = page.waitForResponse((candidate) => candidate.url().includes(part))
  await action()
  return (await (await response).json()) as T
}

/** The data-cell id of the grid cell that has the focus, if one has. */
export const focusedCell = (page: Page) => page.evaluate<string | null>("document.activeElement?.getAttribute('data-cell') ?? null")

/** The grid's row group of one event. */
export const eventGroup = (page: Page, eventNo: number) => page.locator(`tbody.event:has(th[data-cell="${eventNo}:event"])`)

/** One stage cell of the grid. */
export const stageCellOf = (page: Page, eventNo: number, site: string, stage: string) => page.locator(`[data-cell="${eventNo}:${site}:${stage}"]`)
