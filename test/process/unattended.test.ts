import { once } from 'node:events'
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join, resolve } from 'node:path'
import t, { type Test } from 'tap'
import { NOTHING_AUDITED } from '../../src/cli/audit-table.js'
import { openSqliteStore } from '../../src/store/sqlite/store.js'
import { killGroup, spawnOwned } from '../owned-processes.js'
import { defaultSites } from '../sites.js'
import { request, runCli, spawnServer, startServer, stop } from './processes.js'

/*
 * What the service does when nobody watches: it never writes its demo over data, a first start
 * that dies is finished by the next, a command never reports on a store that is not there, and a
 * server that cannot serve says so with a status a supervisor acts on.
 */

const DAY = 86_400_000
const PASSWORD = 'admin-password'

/** Every event of the store, straight from the file (the server stopped or not). */
async function storedEventNumbers(path: string): Promise<number[]> {
  const store = openSqliteStore(path, defaultSites, { whenMissing: 'refuse' })
  try {
    const rows = await store.events.page({ window: { start: 0, end: Date.now() + DAY }, order: 'asc', limit: 1000 })
    const more = await store.events.page({ window: { start: 0, end: Date.now() + DAY }, order: 'asc', limit: 1000, after: rows.at(-1)?.position })
    return [...rows, ...more].map((row) => row.position.event_no)
  } finally {
    await store.close()
  }
}

async function login(url: string) {
  const answer = await request(`${url}/auth`, { body: { username: 'admin', password: PASSWORD } })
  return answer.body.access_token as string
}

t.test('a store that tracer import created keeps its data at the first serve, and the output says why no demo came', async (t) => {
  const env = { TRACER_DB: join(t.testdir(), 'tracer.sqlite'), TRACER_ADMIN_PASSWORD: PASSWORD }
  const file = join(t.testdir(), 'real.ndjson')
  const lines = [
    { event_no: 1, timestamp_utc: new Date(Date.now() - DAY).toISOString(), snr: 30, known_source_name: 'EXT', actions: { want: { baseband: true }, got: {} } },
    { kind: 'trace', event_no: 1, 'stages/tsar_classification': 'complete', 'stages/baseband_callback_request/sites/chime': 'complete' }
  ]
  writeFileSync(file, lines.map((line) => JSON.stringify(line)).join('\n') + '\n')
  const imported = await runCli(['import', file], env)
  t.equal(imported.status, 0, imported.stderr)

  const server = await startServer(t, env)
  t.notOk(server.output.some((line) => line.startsWith('Seeded')), 'no demo data')
  // Printed before the server listens, so it is in the output already.
  t.match(server.output.find((line) => line.startsWith('Did not seed the demo data set')), /only a store that a server creates receives it/)
  const token = await login(server.url)
  const status = await request(`${server.url}/v1/event-tracer/event-status/1`, { token })
  t.match(status.body.trace, { 'stages/tsar_classification': 'complete', 'stages/baseband_callback_request/sites/chime': 'complete' }, 'the imported trace')
  t.equal(status.body.tsar_classification, 'unclassified', 'the imported event, not the demo’s event 1')
  await stop(server.child)
  t.strictSame(await storedEventNumbers(env.TRACER_DB), [1], 'and nothing else')
})

t.test('a restart after the last user was removed writes no demo over the data', async (t) => {
  const env = { TRACER_DB: join(t.testdir(), 'tracer.sqlite'), TRACER_ADMIN_PASSWORD: PASSWORD }
  const first = await startServer(t, env)
  await first.lineMatching(/^Seeded a demo data set/)
  const token = await login(first.url)
  // A key of a demo trace that the demo left incomplete: a pipeline then completes it.
  const window = `start_time_utc=${new Date(Date.now() - 31 * DAY).toISOString()}&end_time_utc=${new Date().toISOString()}`
  const callbacks = (await fetch(`${first.url}/v1/event-tracer/baseband-callbacks?${window}`, { headers: { authorization: token } }).then((answer) =>
    answer.json()
  )) as { event_no: number; trace?: Record<string, unknown> }[]
  const [event, key] = callbacks.flatMap((element) =>
    Object.entries(element.trace ?? {}).flatMap(([name, value]) => (value === 'incomplete' && name.includes('/sites/') ? [[element.event_no, name] as const] : []))
  )[0]!
  const [, stage, site] = /^stages\/(\w+)\/sites\/(\w+)$/.exec(key)!
  const written = await request(`${first.url}/v1/event-tracer/update-trace`, { token, body: { event, site, stage, status: 'complete' } })
  t.equal(written.status, 200)
  await stop(first.child)
  const removed = await runCli(['users', 'remove', 'admin'], env)
  t.equal(removed.status, 0, removed.stderr)

  const second = await startServer(t, env)
  t.notOk(second.output.some((line) => line.startsWith('Seeded')), 'no second demo')
  t.match(second.output.find((line) => line.startsWith('Did not seed the demo data set')), /created before/)
  const again = await login(second.url)
  const status = await request(`${second.url}/v1/event-tracer/event-status/${event}`, { token: again })
  t.equal((status.body.trace as Record<string, string>)[key], 'complete', `${key} of event ${event} stays as the pipeline wrote it`)
  const history = await request(`${second.url}/v1/event-tracer/history/${event}`, { token: again })
  const last = (history.body.transitions as { key: string; to: string }[]).filter((move) => move.key === key).at(-1)
  t.match(last, { to: 'complete', by: 'admin' }, 'and its history agrees with it')
})

t.test('a first start killed while it seeds leaves the demo to the next start, whole', async (t) => {
  const env = { TRACER_DB: join(t.testdir(), 'tracer.sqlite') }
  const first = spawnServer(t, env)
  // The admin is created first and its password printed, then the demo is written: killed on that
  // first line, the first start dies before its demo is (whole).
  const exited = once(first.child, 'exit')
  const stopped = new Promise<void>((resolve) => {
    first.child.stdout!.once('data', () => {
      first.child.kill('SIGKILL')
      resolve()
    })
  })
  await stopped
  await exited
  const second = await startServer(t, env)
  await stop(second.child)
  const events = await storedEventNumbers(env.TRACER_DB)
  t.equal(events.length, 2000, 'every demo event')
  t.equal(events[0], 1)
  t.equal(events.at(-1), 2000)
})

t.test('a command that reads refuses a store that is not there, in one line naming it, and creates nothing', async (t) => {
  const folder = join(t.testdir(), 'typo')
  const env = { TRACER_DB: join(folder, 'x.sqlite') }
  for (const args of [['audit', '--since', '1d'], ['users', 'list'], ['users', 'set-role', 'ana', 'writer'], ['users', 'remove', 'ana']]) {
    const result = await runCli(args, env)
    t.equal(result.status, 1, args.join(' '))
    t.equal(result.stdout, '', 'nothing on standard output')
    t.equal(result.stderr, `tracer: There is no SQLite store at ${env.TRACER_DB}: check TRACER_DB; nothing was read or written.\n`)
  }
  const passwd = await runCli(['users', 'passwd', 'ana', '--password-stdin'], env, 'pw\n')
  t.equal(passwd.status, 1)
  t.match(passwd.stderr, /^tracer: There is no SQLite store at /)
  t.equal(existsSync(folder), false, 'no store, not even its folder')
  const added = await runCli(['users', 'add', 'ana', '--password-stdin'], env, 'pw\n')
  t.equal(added.status, 0, 'users add creates the store')
})

t.test('an audit of a window without baseband events is no all-clear: it says so, and --expect-events exits 3', async (t) => {
  const env = { TRACER_DB: join(t.testdir(), 'tracer.sqlite') }
  t.equal((await runCli(['users', 'add', 'ana', '--password-stdin'], env, 'pw\n')).status, 0)
  const table = await runCli(['audit', '--since', '1d', '--format', 'table'], env)
  t.equal(table.status, 0, 'nothing is stuck or contradictory')
  t.equal(table.stdout.trim().split('\n').at(-1), NOTHING_AUDITED)
  t.notMatch(table.stdout, /No event is stuck/)
  const expecting = await runCli(['audit', '--since', '1d', '--format', 'json', '--expect-events'], env)
  t.equal(expecting.status, 3, expecting.stderr)
  t.match(JSON.parse(expecting.stdout), { summary: { events: 0 } })
})

async function occupiedPort(t: Test): Promise<number> {
  const blocker = createServer().listen(0, '127.0.0.1')
  await once(blocker, 'listening')
  t.teardown(() => void blocker.close())
  return (blocker.address() as { port: number }).port
}

t.test('a server that cannot listen exits 1 with one line naming the address and why', async (t) => {
  const port = await occupiedPort(t)
  const env = { TRACER_DB: join(t.testdir(), 'tracer.sqlite'), PORT: String(port), TRACER_ADMIN_PASSWORD: PASSWORD }
  const taken = await runCli(['serve'], env)
  t.equal(taken.status, 1)
  t.equal(taken.stderr, `tracer: cannot listen on 127.0.0.1:${port}: another process listens on that port already (EADDRINUSE)\n`)
  t.notMatch(taken.stdout, /"msg":"closing"/, 'no close line that reads like a normal stop')

  const unresolvable = await runCli(['serve'], { ...env, PORT: '0', HOST: 'frb-tracer.invalid' })
  t.equal(unresolvable.status, 1)
  t.match(unresolvable.stderr, /^tracer: cannot listen on frb-tracer\.invalid:0: HOST .* \((ENOTFOUND|EAI_AGAIN)\)\n$/)

  const workers = await runCli(['serve'], { ...env, WORKERS: '2' })
  t.equal(workers.status, 1, 'several workers that cannot listen stop the service')
  t.match(workers.stderr, /cannot listen on 127\.0\.0\.1:\d+: another process listens on that port already/)
})

/** The processes whose working folder is `folder`. */
function processesIn(folder: string): number[] {
  return readdirSync('/proc').flatMap((entry) => {
    if (!/^\d+$/.test(entry)) return []
    try {
      // Once the folder is removed, the link names it with a suffix.
      if (!readlinkSync(`/proc/${entry}/cwd`).startsWith(folder)) return []
      // A zombie has exited already; only its parent has not reaped it yet.
      return /^State:\s+Z/m.test(readFileSync(`/proc/${entry}/status`, 'utf8')) ? [] : [Number(entry)]
    } catch {
      return []
    }
  })
}

t.test('SIGTERM to the npm start process stops the server with it: no node is left behind', async (t) => {
  // `npm start` as written in package.json, in a folder of its own, with the build step (it needs
  // the sources) replaced by `true`: what runs is npm, the shell and the same command line.
  const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } }
  const build = 'tsc -b tsconfig.build.json && chmod +x dist/src/cli.js && node dashboard/build.mjs --if-changed'
  t.ok(manifest.scripts.start.startsWith(`${build} && `), 'npm start builds what changed, then serves')
  const folder = resolve(t.testdir(), 'app')
  mkdirSync(folder)
  writeFileSync(join(folder, 'package.json'), JSON.stringify({ name: 'frb-tracer', version: '0.0.0', scripts: { start: manifest.scripts.start.replace(build, 'true') } }))
  symlinkSync(resolve('dist'), join(folder, 'dist'))
  symlinkSync(resolve('node_modules'), join(folder, 'node_modules'))
  // npm leads a group of its own, as in a terminal: the shell and the server are in it.
  const npm = spawnOwned('npm', ['start', '--silent'], {
    cwd: folder,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TRACER_DB: join(folder, 'tracer.sqlite'), TRACER_ADMIN_PASSWORD: PASSWORD, PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  t.teardown(() => {
    killGroup(npm)
    for (const pid of processesIn(folder)) process.kill(pid, 'SIGKILL')
  })
  let output = ''
  await new Promise<void>((resolve, reject) => {
    npm.stdout!.on('data', (chunk) => {
      output += chunk
      if (output.includes('Server listening at')) resolve()
    })
    npm.once('exit', (code) => reject(new Error(`npm start exited (${code}) before the server listened: ${output}`)))
  })
  t.ok(processesIn(folder).some((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('dist/src/cli.js')), 'the server runs')
  const exited = once(npm, 'exit')
  npm.kill('SIGTERM')
  await exited
  t.strictSame(processesIn(folder), [], 'nothing runs in its folder once npm has exited')
  t.match(output, /"signal":"SIGTERM","msg":"closing"/, 'the server itself closed on the signal')
})
