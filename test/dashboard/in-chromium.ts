// The dashboard in Debian's Chromium against a listening service seeded with the demo data.
// One server and one browser for all these suites; each suite opens its own pages.
//
// Static imports, not one `await import` after another: context.ts adds a teardown to tap's root
// test, and from then on tap ends the root test once it has been idle for three timer turns. All
// these modules are loaded before context.ts starts its server and browser, so once it has them,
// every suite registers its tests in the same turn. Loaded one at a time, a module that took a few
// timer turns to load (tap's loader runs in a thread of its own) let the root end first, and the
// suites after it failed with "cannot create subtest after parent test ends".
import './chromium/page.js'
import './chromium/login.js'
import './chromium/grid.js'
import './chromium/filters.js'
import './chromium/panel.js'
import './chromium/live.js'
import './chromium/outage.js'
import './chromium/stale-reason.js'
import './chromium/links.js'
import './chromium/phone.js'
import './chromium/tooltip.js'
import './chromium/keyboard.js'
import './chromium/quality.js'
