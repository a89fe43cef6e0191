import { existsSync } from 'node:fs'
import { chromium, type Browser, type Page } from 'playwright-core'

/** Debian's Chromium: the registry's browser downloads cannot be reached here, so tests use this one. */
export const CHROMIUM = '/usr/bin/chromium'
export const INSTALL_HINT = `Chromium is not installed at ${CHROMIUM}: install it with \`apt-get update && apt-get install -y chromium\``
export const chromiumInstalled = () => existsSync(CHROMIUM)

/** `extraArgs`: more command-line switches, such as `--host-resolver-rules`. */
export function launchChromium(extraArgs: readonly string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...extraArgs
    ]
  })
}

/** Everything a page said that an operator should never see: console errors, uncaught errors, CSP refusals. */
export interface PageProblems {
  console: string[]
  uncaught: string[]
  csp: string[]
}

/**
 * A new page in a fresh context (no shared storage) that records its problems. CSP violations are
 * reported by the page's own `securitypolicyviolation` events, through a binding, which the
 * policy does not govern.
 */
export async function watchedPage(browser: Browser, options: { width?: number; height?: number } = {}) {
  const context = await browser.newContext({ viewport: { width: options.width ?? 1440, height: options.height ?? 900 } })
  const page = await context.newPage()
  const problems: PageProblems = { console: [], uncaught: [], csp: [] }
  page.on('console', (message) => {
    if (message.type() === 'error') problems.console.push(message.text())
  })
  page.on('pageerror', (error) => problems.uncaught.push(error.message))
  await page.exposeBinding('reportCspViolation', (_source, text: string) => void problems.csp.push(text))
  await page.addInitScript(`document.addEventListener('securitypolicyviolation', (event) =>
    window.reportCspViolation(event.violatedDirective + ' blocked ' + (event.blockedURI || 'inline') + ' at ' + event.sourceFile + ':' + event.lineNumber))`)
  return { page, problems, close: () => context.close() }
}

/** Logs in through the form as an operator would. */
export async function logIn(page: Page, url: string, username: string, password: string) {
  await page.goto(url)
  await page.getByLabel('Username').fill(username)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Log in' }).click()
  // The grid, or on a phone the list of events that stands for it.
  await page.getByRole('grid').or(page.getByRole('list', { name: /^Events of the window/ })).waitFor()
}
