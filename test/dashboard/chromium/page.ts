import t from 'tap'
import { DASHBOARD_CSP } from '../../../plugins/dashboard.js'
import { server } from './context.js'

t.test('the built page loads only its own files: no inline script or style, no other origin', async (t) => {
  const page = await fetch(`${server.url}/dashboard/`)
  t.equal(page.status, 200)
  t.equal(page.headers.get('content-security-policy'), DASHBOARD_CSP)
  const html = await page.text()
  t.notMatch(html, /<style|\sstyle=|\son[a-z]+=|javascript:/i, 'no style element, style attribute, handler attribute or javascript: URL')
  const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)]
  t.ok(scripts.length > 0, 'a script')
  for (const [, attributes, body] of scripts) {
    t.match(attributes, /\ssrc="[^"]+"/, 'each script has a src')
    t.equal(body!.trim(), '', 'and no inline code')
  }
  const references = [...html.matchAll(/\s(?:src|href)="([^"]+)"/g)].map((match) => match[1]!).filter((url) => url !== '/docs')
  t.ok(references.length >= 3, references.join(' '))
  for (const reference of references) {
    t.notMatch(reference, /^([a-z]+:|\/\/)/i, `${reference} is on the page's own origin`)
    const asset = await fetch(new URL(reference, `${server.url}/dashboard/`))
    t.equal(asset.status, 200, reference)
    t.equal(asset.headers.get('content-security-policy'), DASHBOARD_CSP, reference)
  }
})
