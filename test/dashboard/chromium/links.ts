import type { Page } from 'playwright-core'
import t from 'tap'
import { OPERATOR } from '../fixture.js'
import type { AuditReport } from '../page-types.js'
import { NOW, openPage, server } from './context.js'
import { apiGet } from './pick.js'

const DAY = 86_400_000

/** Opens `link` as a colleague would: the login form first, then, logged in, the view it names. */
async function openLink(page: Page, link: string) {
  await page.goto(link)
  await page.getByLabel('Username').fill(OPERATOR.username)
  await page.getByLabel('Password').fill(OPERATOR.password)
  const audit = page.waitForResponse((response) => response.url().includes('/v1/event-tracer/audit?'))
  await page.getByRole('button', { name: 'Log in' }).click()
  const response = await audit
  return { report: (await response.json()) as AuditReport, query: new URL(response.url()).searchParams }
}

/** The newest stuck event of the last three days that asked kko for baseband data. */
async function stuckAtKko() {
  const window = `start_time_utc=${new Date(NOW - 3 * DAY).toISOString()}&end_time_utc=${new Date(NOW).toISOString()}`
  const report = await apiGet<AuditReport>(`/v1/event-tracer/audit?${window}&verdict=stuck`)
  const event = report.events.filter((candidate) => candidate.sites.includes('kko')).at(-1)
  if (event === undefined) throw new Error('the demo has no stuck event at kko in its last three days')
  return event.event_no
}

for (const size of [
  { width: 1440, height: 900 },
  { width: 390, height: 844 }
]) {
  t.test(`${size.width} px: a link opens, after the login, the window, filters and event it names`, async (t) => {
    const { page } = await openPage(t, size)
    const eventNo = await stuckAtKko()
    const link = `${server.url}/dashboard/?window=3d&verdict=stuck&site=kko&event=${eventNo}`
    const { report, query } = await openLink(page, link)
    await page.getByRole('complementary', { name: `Event ${eventNo}` }).getByRole('heading', { name: /^History/ }).waitFor()
    t.equal(page.url(), link, 'the address is the link still')
    t.equal(Date.parse(query.get('end_time_utc')!) - Date.parse(query.get('start_time_utc')!), 3 * DAY, 'the window read is three days long')
    t.equal(await page.getByLabel('Window', { exact: true }).inputValue(), '3d', 'the window picker says so')
    t.equal(await page.locator('.tile-stuck input').isChecked(), true, 'stuck only')
    t.equal(await page.getByLabel('Site', { exact: true }).inputValue(), 'kko', 'kko only')
    const shown = report.events.filter((event) => event.verdict === 'stuck' && event.sites.includes('kko')).map((event) => event.event_no)
    t.ok(shown.includes(eventNo), `event ${eventNo} is among the ${shown.length} the view shows`)
    const rows = await page.locator('tbody.event th.event-no').allTextContents()
    t.strictSame(rows.map((text) => Number(text.replace('#', ''))).sort(), shown.map(Number).sort(), 'the grid holds exactly the stuck events at kko')
    t.strictSame(new Set(await page.locator('th.site').allTextContents()), new Set(['kko']), 'and only their kko rows')
    t.equal(await page.locator(`tbody.event.is-open th[data-cell="${eventNo}:event"]`).count(), 1, 'the open event is marked in the grid')
  })

  t.test(`${size.width} px: a link with fixed bounds opens that window`, async (t) => {
    const { page } = await openPage(t, size)
    const from = new Date(NOW - 2 * DAY).toISOString().slice(0, 16)
    const to = new Date(NOW - DAY).toISOString().slice(0, 16)
    const { query } = await openLink(page, `${server.url}/dashboard/?from=${from}Z&to=${to}Z`)
    t.equal(query.get('start_time_utc'), `${from}:00.000Z`, 'the window read starts at the link’s start')
    t.equal(query.get('end_time_utc'), `${to}:00.000Z`, 'and ends at its end')
    t.equal(await page.getByLabel('Window', { exact: true }).inputValue(), 'custom', 'the picker shows two times')
    t.equal(await page.getByLabel('From (UTC)').inputValue(), from.replace('T', ' '), 'the start')
    t.equal(await page.getByLabel('To (UTC)').inputValue(), to.replace('T', ' '), 'the end')
  })
}

t.test('Back and Forward move between the views the operator chose, in the same document', async (t) => {
  const { page } = await openPage(t)
  const eventNo = await stuckAtKko()
  // The page reads the window when it opens and again once the live stream is connected: after both,
  // only what the operator does makes it read.
  let opened = 0
  const secondRead = new Promise<void>((resolve) => {
    page.on('response', (response) => void (response.url().includes('/v1/event-tracer/audit?') && ++opened === 2 && resolve()))
  })
  await openLink(page, `${server.url}/dashboard/?window=3d&verdict=stuck&site=kko&event=${eventNo}`)
  await secondRead
  const panel = page.getByRole('complementary', { name: `Event ${eventNo}` })
  await panel.waitFor()
  await page.evaluate('window.sameDocument = true')
  let windowReads = 0
  page.on('request', (request) => void (request.url().includes('/v1/event-tracer/audit?') && windowReads++))

  const expect = async (what: string, query: string, open: boolean, verdict: string) => {
    await page.waitForURL(`${server.url}/dashboard/${query}`)
    await panel.waitFor({ state: open ? 'visible' : 'detached' })
    t.equal(await page.locator(`.tile-${verdict} input`).isChecked(), true, `${what}: ${query}`)
  }
  await panel.getByRole('button', { name: 'Close the event panel' }).click()
  await expect('the panel closed', '?window=3d&verdict=stuck&site=kko', false, 'stuck')
  await page.locator('.tile-all').click()
  await expect('every verdict', '?window=3d&site=kko', false, 'all')
  await page.goBack()
  await expect('Back: stuck only', '?window=3d&verdict=stuck&site=kko', false, 'stuck')
  await page.goBack()
  await expect('Back: the event open again', `?window=3d&verdict=stuck&site=kko&event=${eventNo}`, true, 'stuck')
  await page.goForward()
  await expect('Forward: closed', '?window=3d&verdict=stuck&site=kko', false, 'stuck')
  await page.goForward()
  await expect('Forward: every verdict', '?window=3d&site=kko', false, 'all')
  await page.getByLabel('Window', { exact: true }).selectOption('6h')
  await expect('a window of 6 hours', '?window=6h&site=kko', false, 'all')
  await page.goBack()
  await expect('Back: three days', '?window=3d&site=kko', false, 'all')
  t.equal(await page.getByLabel('Window', { exact: true }).inputValue(), '3d', 'the picker follows')

  t.equal(await page.evaluate('window.sameDocument'), true, 'no page load')
  t.equal(windowReads, 2, 'the window is read again when it changes, not for the filters or the panel')
})
