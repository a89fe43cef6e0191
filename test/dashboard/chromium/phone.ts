import { mkdirSync } from 'node:fs'
import type { Page } from 'playwright-core'
import t from 'tap'
import { seriousViolations } from './axe.js'
import { dashboardPage } from './context.js'
import { headerLines } from './geometry.js'

const PHONE = { width: 390, height: 844 }
const WORDS = { complete: '✓ complete', in_progress: '○ in progress', stuck: '▲ stuck', contradiction: '✕ contradiction' } as const
const STAGE_WORDS: Record<string, string> = {
  tsar_classification: 'Classification',
  baseband_callback_request: 'Callback request',
  baseband_conversion: 'Conversion',
  data_registration: 'Registration',
  data_replication_to_minoc: 'Replication'
}

/** Whether the page can be scrolled sideways: wider than the viewport anywhere. */
const scrollsSideways = (page: Page) => page.evaluate<boolean>('document.documentElement.scrollWidth > document.documentElement.clientWidth')

/** Every card as the eye meets it: its text and where it lies across. */
const cards = (page: Page) =>
  page.evaluate<{ text: string; left: number; right: number }[]>(`[...document.querySelectorAll('.event-card')].map((card) => {
    const box = card.getBoundingClientRect()
    return { text: card.innerText.replace(/\\s+/g, ' '), left: box.left, right: box.right }
  })`)

t.test('390 px: no sideways scrolling; every event shows its number, its verdict and the stages that are wrong', async (t) => {
  const { page, report } = await dashboardPage(t, PHONE)
  t.equal(await scrollsSideways(page), false, 'the page is no wider than the phone')
  t.equal(await headerLines(page), 1, 'the header takes one line')
  t.equal(await page.getByRole('grid').count(), 0, 'the grid makes way for the list')

  const shown = await cards(page)
  t.equal(shown.length, report.events.length, 'a card per event')
  const byNumber = new Map(shown.map((card) => [/#(\d+)/.exec(card.text)?.[1], card]))
  for (const event of report.events) {
    const card = byNumber.get(String(event.event_no))
    if (!t.ok(card, `event ${event.event_no} has a card`)) continue
    t.ok(card!.left >= 0 && card!.right <= PHONE.width, `event ${event.event_no}: the card is on the screen`)
    t.match(card!.text, WORDS[event.verdict], `event ${event.event_no}: ${event.verdict}, in words`)
    for (const finding of event.findings.filter((f) => f.stage !== null)) {
      const place = finding.site === null ? STAGE_WORDS[finding.stage!]! : `${finding.site} · ${STAGE_WORDS[finding.stage!]!}`
      t.match(card!.text, `${place} ${WORDS[finding.severity].slice(2)}`, `event ${event.event_no}: ${place} is ${finding.severity}`)
    }
  }
  t.strictSame(await seriousViolations(page), [], 'axe-core: no serious or critical violation')
  mkdirSync('.tap/screenshots', { recursive: true })
  await page.screenshot({ path: '.tap/screenshots/dashboard-phone.png' })
  await page.screenshot({ path: '.tap/screenshots/dashboard-phone-full.png', fullPage: true })
})

t.test('390 px: a card opens its event, whose panel holds the event’s whole row of the grid; Close returns to the card', async (t) => {
  const { page, report } = await dashboardPage(t, PHONE)
  const event = [...report.events].reverse().find((candidate) => candidate.verdict === 'stuck' || candidate.verdict === 'contradiction')!
  const card = page.locator('.card-open', { hasText: `#${event.event_no} ` })
  await card.click()
  const panel = page.getByRole('complementary', { name: `Event ${event.event_no}` })
  await panel.getByRole('heading', { name: /^History/ }).waitFor()
  const stages = panel.locator('section:has(#sites-title) tbody tr')
  t.equal(await stages.count(), event.sites.length, 'a row of stages per site it asked')
  t.equal(await scrollsSideways(page), false, 'the panel fits the phone too')
  const { scrollWidth, clientWidth } = await panel
    .locator('section:has(#sites-title) .table-frame')
    .evaluate((frame) => ({ scrollWidth: frame.scrollWidth, clientWidth: frame.clientWidth }))
  t.ok(scrollWidth <= clientWidth, `the stages fit across (${scrollWidth} in ${clientWidth} px)`)
  await page.screenshot({ path: '.tap/screenshots/dashboard-phone-event.png' })
  await panel.getByRole('button', { name: 'Close the event panel' }).click()
  await panel.waitFor({ state: 'detached' })
  t.equal(await card.evaluate((element) => element.matches(':focus')), true, 'the focus is back on the card')
})

t.test('1440 px: the grid, not the cards', async (t) => {
  const { page } = await dashboardPage(t)
  t.equal(await page.getByRole('grid').count(), 1, 'the grid')
  t.equal(await page.getByRole('list', { name: /^Events of the window/ }).count(), 0, 'no list of cards')
})

/** The folded legend's distance from its top to the first card's: what it takes before the events. */
const LEGEND_FOLDED_AT_MOST_PX = 40

t.test('390 px: the legend folds under one line, closed, so the first card follows it; it opens on a tap', async (t) => {
  const { page } = await dashboardPage(t, PHONE)
  const legend = page.locator('details.legend')
  const summary = legend.locator('summary')
  const firstCard = page.locator('.event-card').first()
  t.equal(await legend.evaluate((element) => element.hasAttribute('open')), false, 'closed at first')
  t.ok(await summary.isVisible(), `its line says what it holds: ${await summary.innerText()}`)
  t.equal(await legend.locator('dd').first().isVisible(), false, 'the meanings are folded away')
  const [top, card] = await Promise.all([legend.boundingBox(), firstCard.boundingBox()])
  t.ok(card!.y - top!.y <= LEGEND_FOLDED_AT_MOST_PX, `the first card starts ${card!.y - top!.y} px below the legend’s top`)

  await summary.click()
  const meanings = legend.locator('dd')
  t.equal(await meanings.count(), 4, 'four states')
  t.ok(await meanings.last().isVisible(), 'a tap shows what each colour means')
  t.ok((await firstCard.boundingBox())!.y > card!.y, 'and the cards make room for it')
  await page.screenshot({ path: '.tap/screenshots/dashboard-phone-legend.png' })
  await summary.click()
  t.equal(await meanings.first().isVisible(), false, 'a second tap folds it again')
})

t.test('1440 px: the legend is open, a line of the page rather than a control', async (t) => {
  const { page } = await dashboardPage(t)
  const legend = page.locator('details.legend')
  t.equal(await legend.evaluate((element) => element.hasAttribute('open')), true, 'open')
  t.equal(await legend.locator('summary').isVisible(), false, 'no line to open it')
  const meanings = await legend.locator('dd').evaluateAll((elements) => elements.map((element) => element.textContent))
  t.equal(meanings.length, 4, `each state’s meaning shows: ${meanings.join('; ')}`)
  t.ok(await legend.locator('dd').last().isVisible(), 'in view')
})
