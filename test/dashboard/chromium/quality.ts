import { mkdirSync } from 'node:fs'
import t from 'tap'
import { seriousViolations } from './axe.js'
import { allProblems, dashboardPage, openPage, server } from './context.js'

/** Where the test run leaves its picture of the main view, next to tap's own results. */
export const SCREENSHOT = '.tap/screenshots/dashboard-main.png'

t.test('axe-core finds no serious or critical accessibility violation', async (t) => {
  const { page: login } = await openPage(t)
  await login.goto(`${server.url}/dashboard/`)
  await login.getByLabel('Username').waitFor()
  t.strictSame(await seriousViolations(login), [], 'the login form')

  const { page } = await dashboardPage(t)
  t.strictSame(await seriousViolations(page), [], 'the main view')
  await page.locator('td.verdict').first().click()
  await page.getByRole('heading', { name: /^History/ }).waitFor()
  await page.locator('td.state').nth(3).hover()
  t.strictSame(await seriousViolations(page), [], 'with an event’s panel open and a tooltip shown')
})

t.test('a screenshot of the main view is saved with the test output', async (t) => {
  const { page } = await dashboardPage(t, { width: 1600, height: 1000 })
  await page.mouse.move(0, 0)
  await page.locator('.tooltip').waitFor({ state: 'detached' })
  mkdirSync('.tap/screenshots', { recursive: true })
  await page.screenshot({ path: SCREENSHOT, fullPage: true })
  t.comment(`the main view: ${SCREENSHOT}`)
  t.pass('saved')
})

t.test('no page logged a console error, threw, or broke the Content-Security-Policy', async (t) => {
  t.ok(allProblems.length >= 8, `${allProblems.length} pages watched`)
  t.strictSame(allProblems.flatMap((problems) => problems.csp), [], 'no CSP violation')
  t.strictSame(allProblems.flatMap((problems) => problems.uncaught), [], 'no uncaught error')
  t.strictSame(allProblems.flatMap((problems) => problems.console), [], 'no console error')
})
