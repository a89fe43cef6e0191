import { mkdirSync } from 'node:fs'
import type { Route } from 'playwright-core'
import t from 'tap'
import { listenAgain, stopListening } from '../fixture.js'
import { dashboardPage, server } from './context.js'
import { shownInside } from './geometry.js'

const STREAM = '**/v1/event-tracer/stream*'

/**
 * What the service answers the stream, in turn: 503 with the envelope it sends while its store is
 * away, then 401 as for a session it no longer accepts (after the page's refresh and retry).
 */
const ANSWERS = {
  503: { reasons: ['The store is unavailable; try again shortly.'], exception: 'ServiceUnavailable' },
  401: { reasons: ['The token is invalid.'], exception: 'Unauthorized' }
} as const

for (const size of [
  { width: 1440, height: 900 },
  { width: 390, height: 844 }
]) {
  t.test(`${size.width} px: the notice says in visible words why the page is not current, and since when`, async (t) => {
    const { page, problems } = await dashboardPage(t, { ...size, serviceStops: true })
    let status: keyof typeof ANSWERS = 503
    const answer = (route: Route) =>
      route.fulfill({ status, contentType: 'application/json; charset=utf-8', body: JSON.stringify(ANSWERS[status]) })
    await page.route(STREAM, answer)
    // The open stream is cut (a restart); every attempt to follow it again meets the answers above.
    await stopListening(server)
    await listenAgain(server)

    const notice = page.locator('.stale-notice')
    const reason = notice.locator('.stale-reason')
    await reason.filter({ hasText: 'The store is unavailable; try again shortly.' }).waitFor({ timeout: 5000 })
    t.ok(await shownInside(reason, notice, size), 'a 503: the store is unavailable, in the service’s own words, visible in the notice')
    const since = /Since (\d\d:\d\d:\d\d) UTC/.exec(await notice.innerText())?.[1]
    t.ok(since !== undefined, `and since when (${since} UTC)`)
    t.equal(await notice.getByRole('button', { name: 'Log in again' }).count(), 0, 'no call to log in: the session is fine')
    mkdirSync('.tap/screenshots', { recursive: true })
    await page.screenshot({ path: `.tap/screenshots/dashboard-stale-store-${size.width}.png` })

    status = 401
    await reason.filter({ hasText: 'Signed out: the service no longer accepts this session.' }).waitFor({ timeout: 5000 })
    t.ok(await shownInside(reason, notice, size), 'a 401 after the refresh: signed out, visible in the notice')
    t.match(await notice.innerText(), `Since ${since} UTC`, 'still stale since the stream was lost')
    const logIn = notice.getByRole('button', { name: 'Log in again' })
    t.ok(await shownInside(logIn, notice, size), 'with the way out at hand')
    await page.screenshot({ path: `.tap/screenshots/dashboard-stale-signed-out-${size.width}.png` })
    await logIn.click()
    await page.getByLabel('Username').waitFor()
    t.pass('Log in again returns to the login form')

    await page.unroute(STREAM)
    t.strictSame(problems.csp, [], 'no CSP violation')
    t.strictSame(problems.uncaught, [], 'no uncaught error')
    t.strictSame(
      problems.console.filter((message) => !/status of (401|503)|net::ERR_(CONNECTION_REFUSED|CONNECTION_RESET|EMPTY_RESPONSE|INCOMPLETE_CHUNKED_ENCODING)/.test(message)),
      [],
      'no console error but the refused requests'
    )
  })
}
