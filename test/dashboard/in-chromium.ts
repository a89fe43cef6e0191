// The dashboard in Debian's Chromium against a listening service seeded with the demo data.
// One server and one browser for all these suites; each suite opens its own pages.
import t from 'tap'

// Starting Chromium and seeding cost seconds; on a busy 2-core machine the suites need more than the default minute.
t.setTimeout(600_000)

await import('./chromium/page.js')
await import('./chromium/login.js')
await import('./chromium/grid.js')
await import('./chromium/filters.js')
await import('./chromium/panel.js')
await import('./chromium/live.js')
await import('./chromium/outage.js')
await import('./chromium/links.js')
await import('./chromium/phone.js')
await import('./chromium/tooltip.js')
await import('./chromium/keyboard.js')
await import('./chromium/quality.js')
