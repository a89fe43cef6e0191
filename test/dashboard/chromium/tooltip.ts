import type { Page } from 'playwright-core'
import t from 'tap'
import { OPERATOR } from '../fixture.js'
import { dashboardPage, openPage, server } from './context.js'

/** Where the tooltip is against its cell: 'beside' it (below, or above near the bottom), 'gone', or where it is instead. */
const tipBesideCell = (page: Page, id: string) =>
  page.evaluate<string>(`(async () => {
    // Two frames: scroll handlers and resize observers have run once the second begins.
    await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))
    const tip = document.querySelector('.tooltip')
    if (tip === null) return 'gone'
    const cell = document.querySelector('[data-cell="${id}"]').getBoundingClientRect()
    const box = tip.getBoundingClientRect()
    const below = Math.abs(box.top - (cell.bottom + 6)) < 1
    const above = Math.abs(box.bottom - (cell.top - 6)) < 1
    return below || above ? 'beside' : 'the tooltip is at ' + Math.round(box.top) + ' px, the cell from ' + Math.round(cell.top) + ' to ' + Math.round(cell.bottom)
  })()`)

t.test('a tooltip follows its cell when the page scrolls, the layout shifts or the window resizes', async (t) => {
  const { page } = await dashboardPage(t)
  await page.mouse.move(0, 0)
  const cell = page.locator('td.state[data-cell$=":baseband_conversion"]').nth(4)
  const id = (await cell.getAttribute('data-cell'))!
  await cell.evaluate((element) => element.scrollIntoView({ block: 'center' }))
  await cell.focus()
  await page.locator('.tooltip').waitFor()
  t.equal(await tipBesideCell(page, id), 'beside', 'shown beside its cell')

  await page.evaluate('window.scrollBy(0, 120)')
  t.equal(await tipBesideCell(page, id), 'beside', 'the page scrolled: it moved with the cell')

  // Something above the grid grows, as a notice or a wrapped toolbar would: the cell moves down.
  await page.evaluate("document.querySelector('.legend').style.paddingTop = '150px'")
  t.equal(await tipBesideCell(page, id), 'beside', 'the layout shifted: it moved with the cell')

  await page.setViewportSize({ width: 1100, height: 800 })
  t.match(await tipBesideCell(page, id), /^(beside|gone)$/, 'the window resized: beside the cell, or closed')

  await page.evaluate('window.scrollTo(0, document.documentElement.scrollHeight)')
  t.equal(await tipBesideCell(page, id), 'gone', 'its cell scrolled out of sight: closed')
})

t.test('no tooltip after logging in: the grid appearing under the pointer is no hover; a move onto a cell is', async (t) => {
  const { page } = await openPage(t, { width: 1440, height: 900 })
  // The page's timers on a clock the test runs: the hover's wait passes when the test says so.
  await page.clock.install()
  await page.goto(server.url)
  await page.getByLabel('Username').fill(OPERATOR.username)
  await page.getByLabel('Password').fill(OPERATOR.password)
  const button = page.getByRole('button', { name: 'Log in' })
  const { x, y, width, height } = (await button.boundingBox())!
  await button.click()
  await page.locator('.stream-live').waitFor()
  const resting = { x: x + width / 2, y: y + height / 2 }
  // Two frames: the browser has told the page what is under the pointer at rest by then.
  const restsOn = () =>
    page.evaluate<string | undefined>(`(async () => {
      await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))
      return document.elementFromPoint(${resting.x}, ${resting.y})?.closest('[data-cell]')?.dataset.cell
    })()`)
  t.ok(await restsOn(), 'the pointer that clicked "Log in" rests on a cell of the grid')
  await page.clock.runFor(2000)
  t.equal(await page.locator('.tooltip').count(), 0, 'no tooltip covers the grid')

  await page.mouse.move(resting.x, resting.y + 40)
  await page.clock.runFor(2000)
  t.equal(await page.locator('.tooltip').count(), 1, 'moved onto a cell, the pointer shows its tooltip')
})
