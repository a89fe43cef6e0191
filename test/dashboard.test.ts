// One tap process per group of suites: the page's logic in Node, then the page itself in Chromium.
import t from 'tap'
import './dashboard/page/cells.js'
import './dashboard/page/grid-model.js'
import './dashboard/page/grid-keys.js'
import './dashboard/page/time-window.js'
import './dashboard/page/view-url.js'
import './dashboard/page/session.js'
import './dashboard/page/stream.js'
import './dashboard/page/verdict-batches.js'
import { chromiumInstalled, INSTALL_HINT } from './dashboard/browser.js'

if (chromiumInstalled()) {
  // Starting Chromium and seeding cost seconds; on a busy 2-core machine the suites need more than the default minute.
  t.setTimeout(600_000)
  await import('./dashboard/in-chromium.js')
} else t.test('the dashboard in Chromium', { skip: INSTALL_HINT }, () => {})
