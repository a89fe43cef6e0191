import { AxeBuilder } from '@axe-core/playwright'
import type { Page } from 'playwright-core'

/**
 * What axe-core finds serious or critical on the page as it is now, one line each.
 *
 * Every rule runs on the whole page, as by default; two settings only spare work whose result is
 * never read here. Legacy mode runs axe in the page itself, where the default runs it in every frame
 * and then again in a blank page that it opens to merge their results: the dashboard has no frame
 * (its policy, `default-src 'none'`, loads none), and a same-origin frame would still be scanned.
 * `resultTypes` keeps every node of the violations and one of each other kind (passes, incomplete,
 * inapplicable), which this never reads. Both give the same violations, node for node, as the
 * default on the dashboard with a nameless button, an image without text, low contrast, a bad role
 * and a nameless select added to it, in less than half the time.
 */
export async function seriousViolations(page: Page) {
  const results = await new AxeBuilder({ page }).setLegacyMode().options({ resultTypes: ['violations'] }).analyze()
  return results.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => `${violation.id}: ${violation.help} (${violation.nodes.map((node) => node.target.join(' ')).join(', ')})`)
}
