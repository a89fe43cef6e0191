import { once } from 'node:events'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { serveEnvironment, serveNodeOptions } from '../../src/package-info.js'
import { end, spawnOwned } from '../owned-processes.js'
import { startServer, stop } from './processes.js'

/*
 * Issue 27, finding 3: one configuration per store. A second instance whose TRACER_SITES or
 * STAGE_DEADLINES differ from a live instance's on the same SQLite file does not start (one line on
 * stderr naming the setting and both values, exit 1); stopping every instance and starting one
 * with the new setting changes it, making the kept state again once.
 */

interface Outcome {
  /** The exit status, or `listening` when the server started (it is then stopped). */
  status: number | 'listening' | null
  stderr: string
}

/** Starts `tracer serve` and waits for it to exit, or to listen (then stops it): stopped when the test ends whatever happens. */
async function serveOnce(t: Test, env: Record<string, string>): Promise<Outcome> {
  const child = spawnOwned(process.execPath, [...serveNodeOptions, 'dist/src/cli.js', 'serve'], {
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info', ...serveEnvironment, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  t.teardown(() => end(child, 'SIGKILL'))
  let stderr = ''
  child.stderr!.on('data', (chunk) => (stderr += chunk))
  const listening = new Promise<'listening'>((resolve) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      if (/Server listening at/.test(chunk.toString())) resolve('listening')
    })
  })
  const exited = once(child, 'exit').then(([code]) => code as number | null)
  const status = await Promise.race([listening, exited])
  if (status === 'listening') await stop(child)
  return { status, stderr }
}

t.test('an instance with other sites or deadlines than a live one does not start; stopping all and starting one changes it once', async (t) => {
  const env = { TRACER_DB: join(t.testdir(), 'tracer.sqlite'), TRACER_ADMIN_PASSWORD: 'admin-password', TRACER_SITES: 'chime,kko,gbo,hco' }
  const live = await startServer(t, env)

  const sites = await serveOnce(t, { ...env, TRACER_SITES: 'chime,kko,gbo' })
  t.equal(sites.status, 1, sites.stderr)
  t.match(sites.stderr, /^tracer: TRACER_SITES is chime,kko,gbo here but chime,kko,gbo,hco on a live instance of this store \(pid \d+ on [^)]+\); [^\n]*\n$/)

  const deadlines = await serveOnce(t, { ...env, STAGE_DEADLINES: 'data_registration=6h' })
  t.equal(deadlines.status, 1, deadlines.stderr)
  t.match(deadlines.stderr, /^tracer: STAGE_DEADLINES is [^\n]*data_registration=6h[^\n]* here but [^\n]*data_registration=12h[^\n]* on a live instance of this store [^\n]*\n$/)

  const health = await fetch(`${live.url}/health`)
  t.equal(health.status, 200, 'the live instance serves on')
  t.notOk(live.output.some((line) => /configuration changed|made again/.test(line)), 'and made nothing again')

  // The deliberate change: every instance stopped (a clean stop removes its lease), one started with the new setting.
  await stop(live.child)
  const changed = await startServer(t, { ...env, TRACER_SITES: 'chime,kko,gbo' })
  const said = changed.output.filter((line) => /configuration changed|made again/.test(line))
  t.match(said, [/^The store's configuration changed \(TRACER_SITES chime,kko,gbo,hco -> chime,kko,gbo\)/, /output texts were made again/, /kept audit was made again \(from the records\)/])
  const login = await fetch(`${changed.url}/auth`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: 'admin-password' }) })
  const { access_token } = (await login.json()) as { access_token: string }
  const now = new Date()
  const query = new URLSearchParams({ start_time_utc: new Date(now.getTime() - 30 * 86_400_000).toISOString(), end_time_utc: now.toISOString() })
  const audit = await fetch(`${changed.url}/v1/event-tracer/audit?${query.toString()}`, { headers: { authorization: `Bearer ${access_token}` } })
  t.equal(audit.status, 200)
  const body = (await audit.json()) as { summary: { events: number }; events: { sites: string[] }[] }
  t.ok(body.summary.events > 0, 'the demo data is audited')
  t.notOk(JSON.stringify(body.events).includes('hco'), 'no record names the site the store no longer has')
  await stop(changed.child)

  const again = await startServer(t, { ...env, TRACER_SITES: 'chime,kko,gbo' })
  t.notOk(again.output.some((line) => /configuration changed|made again/.test(line)), 'the next start makes nothing again')
})
