import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Test } from 'tap'

/** Names of the stand-in build's files: a hashed script and stylesheet, as esbuild names them. */
export const BUILT = { script: 'app-ABCD1234.js', style: 'app-WXYZ5678.css' }

/**
 * A folder shaped like dist/dashboard, for route tests that must not depend on the page having
 * been built: index.html, two hashed assets, the icon, and a subfolder that is never served.
 */
export function builtDashboardFixture(t: Test): string {
  // Not in t.testdir(): a second call of that (testConfig makes one) would empty it.
  const root = mkdtempSync(join(tmpdir(), 'frb-dashboard-'))
  t.teardown(() => rmSync(root, { recursive: true, force: true }))
  mkdirSync(join(root, 'src'))
  writeFileSync(join(root, 'index.html'), `<!doctype html><title>t</title><script type="module" src="${BUILT.script}"></script>`)
  writeFileSync(join(root, BUILT.script), 'export {}\n')
  writeFileSync(join(root, BUILT.style), 'body{}\n')
  writeFileSync(join(root, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>')
  writeFileSync(join(root, 'src', 'session.js'), 'export {}\n')
  return root
}
