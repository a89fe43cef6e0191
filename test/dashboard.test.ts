// One tap process per group of suites: the page's logic in Node. The page itself runs in Chromium
// in the process tier (test/process/dashboard-in-chromium.test.ts): a browser is a real process,
// and its checks hold deadlines of the wall clock ("within 2 s").
import './dashboard/page/cells.js'
import './dashboard/page/grid-model.js'
import './dashboard/page/grid-keys.js'
import './dashboard/page/time-window.js'
import './dashboard/page/view-url.js'
import './dashboard/page/session.js'
import './dashboard/page/stream.js'
import './dashboard/page/verdict-batches.js'
