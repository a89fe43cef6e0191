/**
 * /docs renders in a real browser when the service listens on an address other than loopback.
 * Browsers treat http://127.0.0.1 as secure, so a page that works there may still break for
 * everyone else: a Content-Security-Policy with `upgrade-insecure-requests` made Chromium fetch
 * the Swagger UI's scripts over https from a plain-HTTP server, and the page stayed blank.
 * Needs Chromium at /usr/bin/chromium; skipped, saying so, without it.
 */
import { networkInterfaces } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { CHROMIUM, chromiumInstalled, launchChromium } from '../dashboard/browser.js'
import { startServer } from './processes.js'

const RENDER_DEADLINE_MS = 30_000

/** An IPv4 address of this machine other than loopback, if it has one. */
function nonLoopbackAddress(): string | undefined {
  return Object.values(networkInterfaces())
    .flat()
    .find((address) => address !== undefined && address.family === 'IPv4' && !address.internal)?.address
}

const address = nonLoopbackAddress()
const skip = !chromiumInstalled()
  ? `Chromium is not installed at ${CHROMIUM} (apt-get install -y chromium): /docs is not checked in a browser`
  : address === undefined
    ? 'this machine has no IPv4 address but loopback: /docs is not checked on another address'
    : false

t.test('/docs renders in Chromium on a non-loopback address, over plain HTTP', { skip }, async (t) => {
  const server = await startServer(t, { TRACER_DB: join(t.testdir(), 'tracer.sqlite'), HOST: '0.0.0.0' })
  const port = new URL(server.url).port
  const docs = `http://${address}:${port}/docs`

  const browser = await launchChromium()
  t.teardown(() => browser.close())
  const page = await browser.newPage()
  const failed: string[] = []
  page.on('requestfailed', (request) => failed.push(`${request.url()}: ${request.failure()?.errorText}`))
  const insecureUpgrades: string[] = []
  page.on('request', (request) => void (request.url().startsWith('https:') && insecureUpgrades.push(request.url())))

  const response = await page.goto(docs)
  t.equal(response?.status(), 200, `GET ${docs}`)
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
})
