import { mkdirSync } from 'node:fs'
import type { Request } from 'playwright-core'
import t from 'tap'
import { listenAgain, stopListening, updateTraceUnheard } from '../fixture.js'
import { dashboardPage, server, stageCellOf } from './context.js'
import { pick, STAGES, traceValue } from './pick.js'
import { headerLines, shownInside } from './geometry.js'

const STALE_WITHIN_MS = 2000
const LIVE_AGAIN_WITHIN_MS = 5000
/**
 * Failed reconnections to wait for before the service returns. Backing off from 1 s and doubling,
 * the page would next wait 8 to 16 s: the bound on the wait is what this test checks.
 */
const FAILED_RECONNECTIONS = 4

/** Seconds since midnight UTC of `HH:MM:SS`, or of a time in ms since the epoch. */
const secondOfDay = (time: string | number) =>
  typeof time === 'number' ? Math.floor((time % 86_400_000) / 1000) : time.split(':').reduce((sum, part) => sum * 60 + Number(part), 0)

/** `promise`, or a failure saying why once `ms` have passed without it. */
async function within<T>(promise: Promise<T>, ms: number, why: () => string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<never>((_resolve, reject) => (timer = setTimeout(() => reject(new Error(why())), ms)))
  try {
    return await Promise.race([promise, late])
  } finally {
    clearTimeout(timer)
  }
}

for (const size of [
  { width: 1440, height: 900 },
  { width: 390, height: 844 }
]) {
  t.test(`${size.width} px: the service stops, the data is marked stale at once with its age and why, and the page is live within 5 s of its return`, async (t) => {
    const { page, problems, report } = await dashboardPage(t, { ...size, serviceStops: true })
    // Restored whatever happens, for the suites that follow.
    t.teardown(async () => {
      if (!server.app.server.listening) await listenAgain(server)
    })
    const { event, site } = await pick(report, (_event, at, status) => traceValue(status, STAGES[0], at) !== 'complete')
    // Far down the page: the state must not have scrolled away with the header.
    await page.evaluate('window.scrollTo(0, document.documentElement.scrollHeight)')
    t.ok(await page.evaluate('window.scrollY > 0'), 'scrolled down')

    let stopped = Infinity
    let failed = 0
    let reachedFailures: () => void = () => {}
    const enoughFailures = new Promise<void>((resolve) => (reachedFailures = resolve))
    const attempts = new Set<Request>()
    page.on('request', (request) => void (new URL(request.url()).pathname === '/v1/event-tracer/stream' && Date.now() > stopped && attempts.add(request)))
    page.on('requestfailed', (request) => void (attempts.has(request) && ++failed === FAILED_RECONNECTIONS && reachedFailures()))

    stopped = Date.now()
    await stopListening(server)
    const notice = page.locator('.stale-notice')
    await notice.waitFor({ timeout: STALE_WITHIN_MS })
    t.ok(Date.now() - stopped < STALE_WITHIN_MS, `marked stale ${Date.now() - stopped} ms after the service stopped`)
    const text = await notice.innerText()
    const [, from, age] = /Since (\d\d:\d\d:\d\d) UTC \((\d+) s ago\)/.exec(text) ?? []
    t.ok(from !== undefined && age !== undefined, `the notice gives the data's time and age: ${text}`)
    const since = (secondOfDay(from!) - secondOfDay(stopped) + 86_400) % 86_400
    t.ok(since <= STALE_WITHIN_MS / 1000, `the data is from when the service stopped (${from} UTC)`)
    const box = (await notice.boundingBox())!
    t.ok(box.y >= 0 && box.y + box.height <= size.height, 'the notice is in view, scrolled as the page is')
    // The stream may first end as closed; the failed reconnection then says what the page sees.
    const reason = notice.locator('.stale-reason', { hasText: 'The service cannot be reached.' })
    await reason.waitFor({ timeout: 5000 })
    t.ok(await shownInside(reason, notice, size), 'why, in visible words inside the notice: the service cannot be reached')
    t.equal(await page.locator('.data.is-stale').count(), 1, 'the data itself is marked')
    t.equal(await headerLines(page), 1, 'the header keeps to one line while the page reconnects')
    mkdirSync('.tap/screenshots', { recursive: true })
    await page.screenshot({ path: `.tap/screenshots/dashboard-stale-${size.width}.png` })
    await notice.filter({ hasNotText: `(${age} s ago)` }).waitFor({ timeout: 3000 })
    const older = /\((\d+) s ago\)/.exec(await notice.innerText())?.[1]
    t.ok(Number(older) > Number(age), `the age is kept current: ${age} s, then ${older} s`)

    // Written while nobody can hear: no stream carries it, so only reading again shows it.
    await updateTraceUnheard(server, { event: event.event_no, site, stage: STAGES[0], status: 'complete' })
    await within(enoughFailures, 30_000, () => `${failed} failed reconnections in 30 s`)
    t.equal(failed, FAILED_RECONNECTIONS, `${failed} reconnections failed while the service was away`)

    const back = Date.now()
    await listenAgain(server)
    await page.locator('.stream-live').waitFor({ timeout: LIVE_AGAIN_WITHIN_MS })
    t.ok(Date.now() - back < LIVE_AGAIN_WITHIN_MS, `live again ${Date.now() - back} ms after the service returned`)
    await notice.waitFor({ state: 'detached', timeout: LIVE_AGAIN_WITHIN_MS })
    t.equal(await page.locator('.data.is-stale').count(), 0, 'current again')
    await stageCellOf(page, event.event_no, site, STAGES[0]).filter({ hasText: '✓ complete' }).waitFor({ state: 'attached', timeout: 1000 })
    t.pass('the write made while the page could not hear shows: what was missed is read again')

    t.strictSame(problems.csp, [], 'no CSP violation')
    t.strictSame(problems.uncaught, [], 'no uncaught error')
    t.strictSame(
      problems.console.filter((message) => !/net::ERR_(CONNECTION_REFUSED|CONNECTION_RESET|EMPTY_RESPONSE|INCOMPLETE_CHUNKED_ENCODING)/.test(message)),
      [],
      'no console error but the failed requests'
    )
  })
}
