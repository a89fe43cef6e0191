import type { Page } from 'playwright-core'
import t from 'tap'
import { OPERATOR } from '../fixture.js'
import { focusedCell, openPage, server } from './context.js'

/** What has the focus, and whether a focus ring shows (on it, or on the tile around a radio button). */
function focused(page: Page) {
  return page.evaluate<{ what: string; ring: boolean }>(`(() => {
    const element = document.activeElement
    if (element === null || element === document.body) return { what: 'nothing', ring: false }
    const label = element.getAttribute('aria-label') ?? element.labels?.[0]?.textContent ?? element.textContent ?? ''
    const ringed = element.matches('input[type=radio]') ? element.closest('label') : element
    const style = getComputedStyle(ringed)
    return {
      what: element.tagName.toLowerCase() + (element.dataset.cell === undefined ? '' : '.cell') + ' ' + label.replace(/\\s+/g, ' ').trim(),
      ring: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2
    }
  })()`)
}

t.test('with the keyboard alone: log in, walk the controls, move in the grid, open and close an event', async (t) => {
  const { page } = await openPage(t)
  await page.goto(`${server.url}/`)
  await page.waitForFunction("document.activeElement?.id === 'username'")
  await page.keyboard.type(OPERATOR.username)
  await page.keyboard.press('Tab')
  await page.keyboard.type(OPERATOR.password)
  await page.keyboard.press('Enter')
  await page.getByRole('grid').waitFor()
  await page.locator('.stream-live').waitFor()

  const stops: string[] = []
  for (let tab = 0; tab < 8; tab++) {
    await page.keyboard.press('Tab')
    const { what, ring } = await focused(page)
    stops.push(what)
    if (what !== 'nothing') t.ok(ring, `a visible focus ring on ${what}`)
  }
  t.match(stops, [
    /^button Log out/,
    /^select Window/,
    /^button Reload/,
    /^input \d+ all events/,
    /^select Site/,
    /^button Time \(UTC\)/,
    /^th\.cell Event \d+/,
    /^nothing/
  ], 'each control once, and the grid is a single tab stop: the next Tab leaves the page')

  // Back into the grid, then across to the first stage of the first event's first site, and down.
  await page.keyboard.press('Shift+Tab')
  t.match((await focused(page)).what, /^th\.cell Event/)
  for (let step = 0; step < 6; step++) await page.keyboard.press('ArrowRight')
  const first = await focusedCell(page)
  t.match(first, /^\d+:[a-z]+:baseband_callback_request$/, 'arrow keys move from cell to cell')
  await page.keyboard.press('ArrowDown')
  const below = await focusedCell(page)
  t.not(below, first)
  t.match(below, /:baseband_callback_request$/, 'down stays in the column')
  t.ok(await page.locator('.tooltip').isVisible(), 'the focused cell explains itself')
  t.equal(await page.locator('.grid [tabindex="0"]').count(), 1, 'one cell of the grid is in the tab order')

  await page.keyboard.press('Enter')
  const heading = page.getByRole('heading', { name: /^Event \d+$/ })
  // Read in the first frame the panel is there: a key pressed then goes to the panel, not the cell.
  const opened = await page.waitForFunction(`(() => {
    const title = document.getElementById('panel-title')
    return title === null ? null : { focused: document.activeElement === title }
  })()`)
  t.strictSame(await opened.jsonValue(), { focused: true }, 'the panel has the focus from the frame it shows in')
  t.equal((await focused(page)).what.startsWith('h2 Event'), true, 'Enter opens the event with the focus on its panel')
  await page.keyboard.press('Tab')
  t.match((await focused(page)).what, /^button Close the event panel/)
  await page.keyboard.press('Escape')
  await heading.waitFor({ state: 'detached' })
  t.equal(await focusedCell(page), below, 'Escape returns the focus to the cell')

  // The verdict filter and the window with arrow keys, as radio buttons and a select work.
  for (let back = 0; back < 3; back++) await page.keyboard.press('Shift+Tab')
  t.match((await focused(page)).what, /^input \d+ all events/)
  const audit = page.waitForResponse((response) => response.url().includes('/v1/event-tracer/audit?'))
  await page.keyboard.press('ArrowRight')
  t.equal(await page.locator('.tile-contradiction input').isChecked(), true, 'the next verdict is chosen')
  await page.keyboard.press('ArrowLeft')
  t.equal(await page.locator('.tile-all input').isChecked(), true)
  for (let back = 0; back < 2; back++) await page.keyboard.press('Shift+Tab')
  t.match((await focused(page)).what, /^select Window/)
  await page.keyboard.press('ArrowDown')
  const url = new URL((await audit).url())
  t.equal(Date.parse(url.searchParams.get('end_time_utc')!) - Date.parse(url.searchParams.get('start_time_utc')!), 3 * 86_400_000, 'the next window: 3 days')

  await page.keyboard.press('Shift+Tab')
  await page.keyboard.press('Enter')
  await page.getByLabel('Username').waitFor()
  t.pass('Log out with the keyboard')
})
