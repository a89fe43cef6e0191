import t from 'tap'
import { watchedPage } from '../browser.js'
import { OPERATOR } from '../fixture.js'
import { browser, dashboardPage, server } from './context.js'

t.test('/ leads to the login form; a refused login says why', async (t) => {
  // A page of its own: the refused login's 401 is logged by Chromium as a failed resource.
  const { page, problems, close } = await watchedPage(browser)
  t.teardown(close)
  await page.goto(`${server.url}/`)
  t.equal(page.url(), `${server.url}/dashboard/`)
  t.equal(await page.title(), 'frb-tracer · baseband callbacks')
  t.equal(await page.evaluate('document.activeElement?.id'), 'username', 'the cursor is in the username field')
  await page.getByLabel('Username').fill(OPERATOR.username)
  await page.getByLabel('Password').fill('not the password')
  await page.getByRole('button', { name: 'Log in' }).click()
  const refused = await fetch(`${server.url}/auth`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: OPERATOR.username, password: 'not the password' })
  })
  const { reasons } = (await refused.json()) as { reasons: string[] }
  t.equal(await page.getByRole('alert').textContent(), reasons.join(' '), 'the service’s own words')
  t.equal(await page.getByRole('grid').count(), 0)
  t.strictSame(problems.csp, [])
  t.strictSame(problems.uncaught, [])
  t.match(problems.console, [/401/], 'only the refused request')
})

t.test('tokens live in memory only, and logging out forgets them and closes the stream', async (t) => {
  const { page } = await dashboardPage(t)
  const stored = await page.evaluate('({ local: localStorage.length, session: sessionStorage.length, cookie: document.cookie })')
  t.strictSame(stored, { local: 0, session: 0, cookie: '' })
  t.strictSame(await page.context().cookies(), [])

  const streamClosed = page.waitForEvent('requestfailed', (request) => new URL(request.url()).pathname === '/v1/event-tracer/stream')
  await page.getByRole('button', { name: 'Log out' }).click()
  t.match((await streamClosed).failure()?.errorText, /ABORTED/, 'the live stream is cancelled')
  await page.getByLabel('Username').waitFor()
  t.equal(await page.evaluate('document.activeElement?.id'), 'username')
  t.equal(await page.getByRole('grid').count(), 0)
  t.equal(await page.getByLabel('Password').inputValue(), '', 'the password is not kept either')
})
