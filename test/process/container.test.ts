import { once } from 'node:events'
import { chownSync, existsSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { closedPort, request } from './processes.js'
import { halfSentWrite } from '../raw-http.js'
import { CONTAINERFILE, ROOT, ownName, ownVolume, podman, podmanOk, readyBaseImages, runContainer } from './containers.js'

/*
 * Issue 43: the image operators run. Built from the Containerfile as an operator builds it, then
 * run on a volume as they run it: the first user made in the container, an event written and read,
 * a stop mid-write, and a new container on the same volume that still has the event and the secret.
 */

// A first build on a new machine installs podman, bootstraps the stand-in base and compiles
// better-sqlite3; later builds reuse podman's layers.
t.setTimeout(45 * 60_000)

const IMAGE = 'localhost/frb-tracer:process-test'
const PASSWORD = 'a password of the operator'
/** Every package the lockfile installs for development only (a dependency of a dependency included), by its folder. */
const devOnly = Object.entries((JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> }).packages)
  .filter(([path, entry]) => entry.dev === true && path.startsWith('node_modules/'))
  .map(([path]) => path)

const unavailable = await readyBaseImages()

t.test('the container image: built, run on a volume, stopped, replaced', { skip: unavailable ?? false }, async (t) => {
  // Docker's image format keeps the HEALTHCHECK, which the OCI format has no field for.
  await podmanOk(['build', '--pull=never', '--network', 'host', '--format', 'docker', '-f', CONTAINERFILE, '-t', IMAGE, ROOT])

  t.test('the image holds the service and nothing to build it with', async (t) => {
    t.equal((await podmanOk(['image', 'inspect', IMAGE, '--format', '{{.Config.User}}'])).trim(), 'node', 'it runs as node')
    t.match(await podmanOk(['image', 'inspect', IMAGE, '--format', '{{json .Config.Healthcheck}}']), /\/health/, 'its health check asks /health')
    const inside = (script: string, ...args: string[]) =>
      podmanOk(['run', '--rm', '--network', 'none', '--entrypoint', 'sh', IMAGE, '-c', script, 'sh', ...args])
    t.equal(await inside('for tool in cc gcc g++ c++ make python3; do command -v "$tool"; done; true'), '', 'no compiler, make or python')
    t.ok(devOnly.length > 100, `${devOnly.length} packages are for development only`)
    t.equal(await inside('cd /app && for path; do [ ! -e "$path" ] || echo "$path"; done', ...devOnly), '', 'none of them is in the image')
    t.equal(await inside('cd /app && ls -d dist/* | sort'), 'dist/dashboard\ndist/plugins\ndist/schemas\ndist/src\n', 'the compiled service and the dashboard only')
    t.equal(await inside('stat -c "%a %U" /data'), '700 node\n', '/data is the service user’s alone')
  })

  const volume = await ownVolume(t, ownName('data'))
  const port = await closedPort()
  const base = `http://127.0.0.1:${port}`
  // Host networking on a loopback port: the test reaches the service as a client on the same host would.
  const options = ['--network', 'host', '--volume', `${volume}:/data`, '--env', 'HOST=127.0.0.1', '--env', `PORT=${port}`]
  const listening = new RegExp(`"msg":"Server listening at http://127\\.0\\.0\\.1:${port}"`)

  const first = runContainer(t, ownName('first'), options, IMAGE)
  await first.lineMatching(listening)

  const processOne = await podmanOk(['exec', ownName('first'), 'cat', '/proc/1/status'])
  const uid = /^Uid:\s+(\d+)/m.exec(processOne)?.[1]
  t.not(uid, '0', 'the server does not run as root')
  t.equal(uid, (await podmanOk(['exec', ownName('first'), 'id', '-u', 'node'])).trim(), 'it runs as node')
  // The store and the secret hold password hashes and the signing key: the service user's alone.
  t.match(
    await podmanOk(['exec', ownName('first'), 'stat', '-c', '%a %U %n', '/data', '/data/jwt-secret', '/data/tracer.sqlite']),
    /^700 node \/data\n600 node \/data\/jwt-secret\n600 node \/data\/tracer\.sqlite\n$/,
    'the store and the generated secret are in the volume, the service user’s alone'
  )
  t.equal((await podman(['healthcheck', 'run', ownName('first')])).status, 0, 'the health check passes')

  const added = await podman(['exec', '--interactive', ownName('first'), 'tracer', 'users', 'add', 'operator', '--role', 'writer', '--password-stdin'], PASSWORD)
  t.equal(added.status, 0, `the first user is made in the container: ${added.stderr}`)
  const login = await request(`${base}/auth`, { body: { username: 'operator', password: PASSWORD } })
  t.equal(login.status, 200, 'the user logs in')
  const token = login.body.access_token as string

  const event = { event_no: 9_000_001, timestamp_utc: '2026-11-01T10:00:00.000Z', snr: 12.5, known_source_name: 'FRB 20201124A' }
  t.same((await request(`${base}/v1/events`, { token, body: [event] })).body, { upserted: 1 }, 'an event is written')
  t.match((await request(`${base}/v1/events/${event.event_no}`, { token })).body, event, 'and read')
  for (const path of ['/dashboard/', '/docs/json']) {
    const response = await fetch(`${base}${path}`)
    await response.arrayBuffer()
    t.equal(response.status, 200, `${path} is served`)
  }

  // A backup from outside: a second container on the volume, the copy in a folder of the host.
  const backups = join(t.testdir(), 'backups')
  mkdirSync(backups, { mode: 0o700 })
  chownSync(backups, Number(uid), Number(uid))
  const backup = await podman(['run', '--rm', '--volume', `${volume}:/data`, '--volume', `${backups}:/backup`, IMAGE, 'tracer', 'backup', '/backup/tracer.sqlite'])
  t.match(backup, { status: 0, stdout: /^Backed up \/data\/tracer\.sqlite to \/backup\/tracer\.sqlite .*integrity check ok/s }, 'a backup is made while it serves')
  t.ok(existsSync(join(backups, 'tracer.sqlite')), 'into the host’s folder')

  // docker stop, as podman does it: SIGTERM, then SIGKILL (exit 137) if the container still runs 10 s later.
  const inFlight = await halfSentWrite(port, token, 9_000_002)
  const exited = once(first.child, 'exit') as Promise<[number | null]>
  const stopping = podman(['stop', '--time', '10', ownName('first')])
  await first.lineMatching(/"msg":"closing"/)
  t.match(await inFlight.finish(), /\r\n\r\nHTTP\/1\.1 200 [^]*\{"upserted":1\}$/, 'the write in flight at the stop is answered')
  t.equal((await stopping).status, 0, 'podman stop returns')
  // What the server said as it closed, shown if it did not end in time.
  const closingLines = () => first.output.slice(first.output.findIndex((line) => line.includes('"msg":"closing"')))
  t.equal((await exited)[0], 0, 'the container exits 0 on SIGTERM, within the grace of docker stop', { closing: closingLines() })

  const second = runContainer(t, ownName('second'), options, IMAGE)
  await second.lineMatching(listening)
  t.notOk(second.output.some((line) => line.includes('Created user')), 'no new first user on the volume')
  t.match((await request(`${base}/v1/events/${event.event_no}`, { token })).body, event, 'a new container on the volume has the event, and the token still works')
  t.equal((await request(`${base}/v1/events/9000002`, { token })).status, 200, 'and the write answered during the stop')

  const secondExited = once(second.child, 'exit') as Promise<[number | null]>
  t.equal((await podman(['stop', ownName('second')])).status, 0)
  t.equal((await secondExited)[0], 0, 'it exits 0 too')
})
