/**
 * /docs renders in a real browser when it is reached under a name other than loopback's.
 * Browsers treat http://127.0.0.1 and http://localhost as secure, so a page that works there may
 * still break for everyone else: a Content-Security-Policy with `upgrade-insecure-requests` made
 * Chromium fetch the Swagger UI's scripts over https from a plain-HTTP server, and the page stayed
 * blank. The service listens on loopback, as every test's does; Chromium's resolver maps a name of
 * the reserved `.test` domain to it, and a page from that name is no secure context.
 * Needs Chromium at /usr/bin/chromium; skipped, saying so, without it.
 */
import { join } from 'node:path'
import t from 'tap'
import { CHROMIUM, chromiumInstalled, launchChromium } from '../dashboard/browser.js'
import { startServer } from './processes.js'

const RENDER_DEADLINE_MS = 30_000
/** A name that no resolver knows (RFC 2606 reserves `.test`): only Chromium's own rule maps it. */
const HOST_NAME = 'tracer.frb.test'

const skip = chromiumInstalled() ? false : `Chromium is not installed at ${CHROMIUM} (apt-get install -y chromium): /docs is not checked in a browser`

t.test('/docs renders in Chromium under a name that is not loopback\'s, over plain HTTP', { skip }, async (t) => {
  const server = await startServer(t, { TRACER_DB: join(t.testdir(), 'tracer.sqlite') })
  const { hostname, port } = new URL(server.url)
  t.equal(hostname, '127.0.0.1', 'the service listens on loopback')
  const docs = `http://${HOST_NAME}:${port}/docs`

  const browser = await launchChromium([`--host-resolver-rules=MAP ${HOST_NAME} 127.0.0.1`])
  t.teardown(() => browser.close())
  const page = await browser.newPage()
  const failed: string[] = []
  page.on('requestfailed', (request) => failed.push(`${request.url()}: ${request.failure()?.errorText}`))
  // A Content-Security-Policy that blocks something of the page's own is a console error, as is any
  // script error: the page must render with none.
  const consoleErrors: string[] = []
  page.on('console', (message) => void (message.type() === 'error' && consoleErrors.push(message.text())))
  page.on('pageerror', (error) => consoleErrors.push(error.message))
  const insecureUpgrades: string[] = []
  page.on('request', (request) => void (request.url().startsWith('https:') && insecureUpgrades.push(request.url())))

  const response = await page.goto(docs)
  t.equal(response?.status(), 200, `GET ${docs}`)
  t.equal(await page.evaluate('isSecureContext'), false, 'the page is no secure context, as for a user on another machine')
  // goto waits for the page's load event: its scripts and styles have been fetched or have failed.
  t.strictSame(insecureUpgrades, [], 'nothing was fetched over https')
  t.strictSame(failed, [], 'no request of the page failed')
  // The rendered UI: the document's title and one operation block per route.
  const title = page.locator('.swagger-ui .info .title')
  await title.waitFor({ timeout: RENDER_DEADLINE_MS })
  t.match(await title.innerText(), /frb-tracer/)
  await page.locator('.opblock').first().waitFor({ timeout: RENDER_DEADLINE_MS })
  t.ok((await page.locator('.opblock').count()) >= 10, 'the operations are listed')
  t.strictSame(failed, [], 'and no request failed while it rendered')
  t.strictSame(consoleErrors, [], 'no console error, no policy violation')
})
