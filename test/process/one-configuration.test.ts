import type { ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { serveEnvironment, serveNodeOptions } from '../../src/package-info.js'
import { LEASE_EXPIRES_MS } from '../../src/store/configuration.js'
import { openKeptDatabase } from '../../src/store/sqlite/native-lifetimes.js'
import { end, spawnOwned } from '../owned-processes.js'
import { runCli, startServer, stop, waitFor } from './processes.js'

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

/** Ages every lease of the store as renewals held up for `ms` would leave them; undefined while another connection holds the write lock. */
function ageLeases(path: string, ms: number): number[] | undefined {
  const db = openKeptDatabase(path, { timeout: 0 })
  try {
    return db
      .transaction(() => {
        db.prepare('UPDATE instances SET renewed_at = renewed_at - ?').run(ms)
        return db.prepare<[], number>('SELECT renewed_at FROM instances').pluck().all()
      })
      .immediate()
  } catch (error) {
    if (String((error as { code?: unknown }).code).startsWith('SQLITE_BUSY')) return undefined
    throw error
  } finally {
    db.close()
  }
}

const stateOf = (pid: number) => readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '')[0]

/**
 * Pauses the server (it then renews nothing) where it holds no write lock, and ages its lease as
 * held-up renewals would: a pause that caught it inside a transaction is undone and tried again.
 */
async function pauseAndAge(child: ChildProcess, path: string, ms: number): Promise<number[]> {
  for (;;) {
    child.kill('SIGSTOP')
    await waitFor(async () => stateOf(child.pid!) === 'T', 10_000)
    const aged = ageLeases(path, ms)
    if (aged !== undefined) return aged
    child.kill('SIGCONT')
    await new Promise((resolve) => setImmediate(resolve))
  }
}

const leaseTimes = (path: string): number[] => {
  const db = openKeptDatabase(path, { readonly: true })
  try {
    return db.prepare<[], number>('SELECT renewed_at FROM instances').pluck().all()
  } finally {
    db.close()
  }
}

// Issue 40, point 4: an instance whose renewals were held up past its lease (another program's
// lock holds them up as a pause does) keeps its claim on the store; taking over from an instance
// that stopped without removing its lease is the operator's act, `tracer take-over`.
t.test('a running instance whose lease was not renewed in time keeps the store; a lapsed lease is taken over only by `tracer take-over`', async (t) => {
  const path = join(t.testdir(), 'tracer.sqlite')
  const env = { TRACER_DB: path, TRACER_ADMIN_PASSWORD: 'admin-password', TRACER_SITES: 'chime,kko,gbo,hco' }
  const live = await startServer(t, env)
  const pid = live.child.pid!

  // Paused, it renews nothing; its lease is then aged as three expiries of held-up renewals would leave it.
  let aged: number[] = []
  try {
    aged = await pauseAndAge(live.child, path, 3 * LEASE_EXPIRES_MS)
    const other = await serveOnce(t, { ...env, TRACER_SITES: 'chime,kko,gbo' })
    t.equal(other.status, 1, other.stderr)
    t.match(other.stderr, new RegExp(`^tracer: TRACER_SITES is chime,kko,gbo here but chime,kko,gbo,hco on a live instance of this store \\(pid ${pid} on [^)]+\\); [^\\n]*\\n$`))
  } finally {
    live.child.kill('SIGCONT')
  }
  await waitFor(async () => leaseTimes(path).some((at) => at > Math.max(...aged)), 30_000)
  t.equal((await fetch(`${live.url}/health`)).status, 200, 'the instance renewed its lease and serves on')
  t.equal(live.child.exitCode, null, 'it did not exit')
  t.notOk(live.output.some((line) => /configuration changed|made again/.test(line)), 'and nothing was made again')

  // Killed, it leaves its lease behind: a start with other sites is refused until the operator takes the store over.
  await stop(live.child, 'SIGKILL')
  t.ok(ageLeases(path, 3 * LEASE_EXPIRES_MS), 'its lease aged as if it had been killed a minute ago')
  const lapsed = await serveOnce(t, { ...env, TRACER_SITES: 'chime,kko,gbo' })
  t.equal(lapsed.status, 1, lapsed.stderr)
  t.match(lapsed.stderr, new RegExp(`^tracer: TRACER_SITES is chime,kko,gbo here but chime,kko,gbo,hco on an instance of this store that stopped without removing its lease \\(pid ${pid} on [^)]+\\); [^\\n]*tracer take-over[^\\n]*\\n$`))
  const takeOver = await runCli(['take-over'], { TRACER_DB: path })
  t.equal(takeOver.status, 0, takeOver.stderr)
  t.match(takeOver.stdout, new RegExp(`^Removed 1 lapsed lease \\(pid ${pid} on `))
  const changed = await startServer(t, { ...env, TRACER_SITES: 'chime,kko,gbo' })
  t.match(changed.output.filter((line) => /configuration changed/.test(line)), [/^The store's configuration changed \(TRACER_SITES chime,kko,gbo,hco -> chime,kko,gbo\)/])
  await stop(changed.child)
})
