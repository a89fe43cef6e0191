import t from 'tap'
import { dashboardPage } from './context.js'

t.test('filters by verdict and by site', async (t) => {
  const { page, report } = await dashboardPage(t)
  await page.locator('.tile-stuck').click()
  const stuck = report.events.filter((event) => event.verdict === 'stuck')
  await page.locator('tbody.event').nth(stuck.length).waitFor({ state: 'detached' })
  t.equal(await page.locator('tbody.event').count(), stuck.length, 'only stuck events')
  t.strictSame(new Set(await page.locator('td.verdict').allInnerTexts()), new Set(['▲ stuck']))
  t.equal(await page.locator('.tile-stuck input').isChecked(), true)

  const site = 'kko'
  await page.getByLabel('Site', { exact: true }).selectOption(site)
  const both = stuck.filter((event) => event.sites.includes(site))
  await page.locator('th.site').first().waitFor()
  t.equal(await page.locator('tbody.event').count(), both.length, `only stuck events that asked ${site}`)
  t.strictSame(new Set(await page.locator('th.site').allInnerTexts()), both.length === 0 ? new Set() : new Set([site]), `only the ${site} rows`)

  await page.locator('.tile-all').click()
  await page.getByLabel('Site', { exact: true }).selectOption('all')
  await page.locator('tbody.event').nth(report.events.length - 1).waitFor()
  t.equal(await page.locator('tbody.event').count(), report.events.length, 'all events again')

  await page.locator('.tile-contradiction').click()
  if (report.summary.contradiction === 0) {
    t.equal(await page.getByRole('status').filter({ hasText: 'No event matches the filters.' }).count(), 1, 'says none match')
  } else {
    t.equal(await page.locator('tbody.event').count(), report.summary.contradiction)
  }
})
