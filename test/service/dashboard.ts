import { join } from 'node:path'
import t, { type Test } from 'tap'
import { DASHBOARD_CSP } from '../../plugins/dashboard.js'
import { buildApp } from '../../src/app.js'
import { openStore } from '../../src/store/open.js'
import { BUILT, builtDashboardFixture } from '../dashboard/assets.js'
import { testConfig, type App } from '../helper.js'

async function appServing(t: Test, dashboardRoot: string): Promise<App> {
  const config = testConfig(t)
  const app = await buildApp({ config, store: await openStore(config), dashboardRoot })
  t.teardown(() => app.close())
  return app
}

t.test('/ and /dashboard lead to the dashboard, keeping the view a link names', async (t) => {
  const app = await appServing(t, builtDashboardFixture(t))
  const expected: Record<string, string> = {
    '/': '/dashboard/',
    '/dashboard': '/dashboard/',
    '/?x=1': '/dashboard/?x=1',
    '/dashboard?window=3d&verdict=stuck&site=kko&event=5000': '/dashboard/?window=3d&verdict=stuck&site=kko&event=5000'
  }
  for (const [url, location] of Object.entries(expected)) {
    const response = await app.inject({ url })
    t.equal(response.statusCode, 302, url)
    t.equal(response.headers.location, location, url)
  }
})

t.test('the page and its assets carry a strict policy of their own and the API’s other headers', async (t) => {
  const app = await appServing(t, builtDashboardFixture(t))
  const page = await app.inject({ url: '/dashboard/' })
  t.equal(page.statusCode, 200)
  t.match(page.headers['content-type'], /^text\/html/)
  t.match(page.body, BUILT.script)
  t.equal(page.headers['cache-control'], 'no-cache', 'a new build is seen at once')
  for (const url of ['/dashboard/', `/dashboard/${BUILT.script}`, '/dashboard/favicon.svg']) {
    const response = await app.inject({ url })
    t.equal(response.statusCode, 200, url)
    t.equal(response.headers['content-security-policy'], DASHBOARD_CSP, url)
    t.equal(response.headers['x-content-type-options'], 'nosniff', url)
    t.equal(response.headers['x-frame-options'], 'DENY', url)
  }
  t.equal(DASHBOARD_CSP, "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
  const script = await app.inject({ url: `/dashboard/${BUILT.script}` })
  t.match(script.headers['content-type'], /javascript/)
  t.equal(script.headers['cache-control'], 'public, max-age=31536000, immutable', 'hashed names never change content')
  const api = await app.inject({ url: '/version' })
  t.equal(api.headers['content-security-policy'], "default-src 'none';frame-ancestors 'none'", 'the API keeps its own policy')
})

t.test('only the page’s own files are served; everything else is the envelope', async (t) => {
  const app = await appServing(t, builtDashboardFixture(t))
  for (const url of ['/dashboard/nope.js', '/dashboard/src/session.js', '/dashboard/%2e%2e/%2e%2e/package.json', '/dashboard/../package.json']) {
    const response = await app.inject({ url })
    t.equal(response.statusCode, 404, url)
    t.equal(response.json().exception, 'NotFound', url)
  }
  const post = await app.inject({ method: 'POST', url: '/dashboard/' })
  t.equal(post.statusCode, 405)
  t.equal(post.json().exception, 'MethodNotAllowed')
  t.match(post.headers.allow, /GET/)
  const postRoot = await app.inject({ method: 'POST', url: '/' })
  t.equal(postRoot.statusCode, 405)
})

t.test('without a build every page answers 503 saying how to build it', async (t) => {
  const app = await appServing(t, join(builtDashboardFixture(t), 'src'))
  for (const url of ['/dashboard/', `/dashboard/${BUILT.script}`]) {
    const response = await app.inject({ url })
    t.equal(response.statusCode, 503, url)
    t.strictSame(response.json(), {
      reasons: ['The dashboard is not built: run `npm run build`, then start the service again.'],
      exception: 'ServiceUnavailable'
    })
  }
  t.equal((await app.inject({ url: '/' })).statusCode, 302, '/ still leads there')
})

t.test('the dashboard’s routes stay out of the API document', async (t) => {
  const app = await appServing(t, builtDashboardFixture(t))
  const paths = Object.keys((await app.inject({ url: '/openapi.json' })).json().paths as object)
  t.notOk(paths.some((path) => path === '/' || path.startsWith('/dashboard')), paths.join(' '))
})
