// The dashboard in Debian's Chromium against a listening service seeded with the demo data
// (test/dashboard/in-chromium.ts). Skipped, saying how to install it, without Chromium.
import t from 'tap'
import { chromiumInstalled, INSTALL_HINT } from '../dashboard/browser.js'

if (chromiumInstalled()) {
  // Starting Chromium and seeding cost seconds; on a busy 2-core machine the suites need more than the default minute.
  t.setTimeout(600_000)
  await import('../dashboard/in-chromium.js')
} else t.test('the dashboard in Chromium', { skip: INSTALL_HINT }, () => {})
