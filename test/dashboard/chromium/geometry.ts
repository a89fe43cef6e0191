import type { Locator, Page } from 'playwright-core'

export interface Box {
  x: number
  y: number
  width: number
  height: number
}

/** Whether `inner` lies within `outer`, give or take half a pixel of rounding. */
export const within = (inner: Box, outer: Box) =>
  inner.x >= outer.x - 0.5 &&
  inner.y >= outer.y - 0.5 &&
  inner.x + inner.width <= outer.x + outer.width + 0.5 &&
  inner.y + inner.height <= outer.y + outer.height + 0.5

/**
 * Whether a person sees `target`: drawn, not a text kept for screen readers or hidden from them,
 * and wholly inside `container` and the window.
 */
export async function shownInside(target: Locator, container: Locator, viewport: { width: number; height: number }): Promise<boolean> {
  if (!(await target.isVisible())) return false
  if (await target.evaluate((element) => element.closest('.visually-hidden, [aria-hidden="true"]') !== null)) return false
  const [box, outer] = await Promise.all([target.boundingBox(), container.boundingBox()])
  return box !== null && outer !== null && box.width > 20 && within(box, outer) && within(box, { x: 0, y: 0, ...viewport })
}

/**
 * The boxes of every element `selector` finds, as the page lays them out, named by their text:
 * for checking where each lies against another box.
 */
export const boxesOf = (page: Page, selector: string) =>
  page.locator(selector).evaluateAll((elements) =>
    elements.map((element) => {
      const { x, y, width, height } = element.getBoundingClientRect()
      return { what: `${element.tagName.toLowerCase()} “${(element.textContent ?? '').trim().slice(0, 30)}”`, x, y, width, height }
    })
  )

/** How many lines of text the header takes: the line boxes of its texts that overlap in height share a line. */
export const headerLines = (page: Page) =>
  page.evaluate<number>(`(() => {
    const texts = document.createTreeWalker(document.querySelector('.top'), NodeFilter.SHOW_TEXT)
    const lines = []
    for (let text = texts.nextNode(); text !== null; text = texts.nextNode()) {
      const range = document.createRange()
      range.selectNodeContents(text)
      for (const box of range.getClientRects()) {
        if (box.width === 0 || box.height === 0) continue
        if (!lines.some((line) => box.top < line.bottom - 2 && box.bottom > line.top + 2)) lines.push(box)
      }
    }
    return lines.length
  })()`)
