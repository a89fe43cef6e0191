import t from 'tap'
import { dashboardPage, NOW } from './context.js'

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
  if (both.length === 0) await page.getByRole('status').filter({ hasText: 'No event matches the filters.' }).waitFor()
  else await page.locator('th.site').first().waitFor()
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

t.test('a window between two times typed in UTC; a bound that is no time is refused in words', async (t) => {
  const { page } = await dashboardPage(t)
  await page.getByLabel('Window', { exact: true }).selectOption('custom')
  await page.getByLabel('From (UTC)').fill('2026-02-30 10:00')
  await page.getByRole('button', { name: 'Apply' }).click()
  t.equal(await page.getByRole('alert').innerText(), 'Give the start of the window as YYYY-MM-DD HH:MM, in UTC.')

  const start = new Date(NOW - 3 * 86_400_000).toISOString().slice(0, 16)
  const end = new Date(NOW - 86_400_000).toISOString().slice(0, 16)
  await page.getByLabel('From (UTC)').fill(start.replace('T', ' '))
  await page.getByLabel('To (UTC)').fill(end)
  const audit = page.waitForResponse((response) => response.url().includes('/v1/event-tracer/audit?'))
  await page.getByRole('button', { name: 'Apply' }).click()
  const query = new URL((await audit).url()).searchParams
  t.equal(query.get('start_time_utc'), `${start}:00.000Z`)
  t.equal(query.get('end_time_utc'), `${end}:00.000Z`)
  await page.locator('.as-of').filter({ hasText: `${start.replace('T', ' ')}:00 to ${end.replace('T', ' ')}:00 UTC` }).waitFor()
  t.equal(await page.getByRole('alert').count(), 0, 'the refusal is gone')
})
