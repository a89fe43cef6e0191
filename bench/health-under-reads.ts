/**
 * Whether /health stays answered while clients read one very large event: 100,000 heartbeats are
 * posted for event 1, then ten connections read its status (or `path`) for ten seconds while
 * /health is asked every 50 ms. Prints the reads' rate and size, /health's p50 and maximum, and
 * the service's RSS before and at most. Run after `npm run build`:
 *
 *   node dist/bench/health-under-reads.js [path]
 *
 * docs/performance.md quotes what it measured once; the figures depend on the machine.
 */
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import autocannon from 'autocannon'
import { ROOT } from './paths.js'
import { rssBytes, toMb } from './rss.js'

const HEARTBEAT_BATCHES = 100
const HEARTBEATS_A_BATCH = 1000
const PORT = 38111
const path = process.argv[2] ?? '/v1/event-tracer/event-status/1'
const url = `http://127.0.0.1:${PORT}`

const folder = mkdtempSync(join(tmpdir(), 'health-under-reads-'))
const env = {
  PATH: process.env.PATH ?? '',
  TRACER_DB: join(folder, 'tracer.sqlite'),
  PORT: String(PORT),
  HOST: '127.0.0.1',
  NODE_ENV: 'production',
  JWT_SECRET: 'a-measurement-secret-that-is-long-enough-0123456789',
  LOG_LEVEL: 'warn'
}
const cli = join(ROOT, 'dist/src/cli.js')
const added = spawnSync(process.execPath, [cli, 'users', 'add', 'writer', '--role', 'writer', '--password-stdin'], { env, input: 'a-password\n' })
if (added.status !== 0) throw new Error(added.stderr.toString())
const server = spawn(process.execPath, [cli, 'serve'], { env, stdio: ['ignore', 'inherit', 'inherit'] })
try {
  await untilHealthy()
  const login = await fetch(`${url}/auth`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'writer', password: 'a-password' })
  })
  const token = ((await login.json()) as { access_token: string }).access_token
  await postHeartbeats(token)

  const rssBefore = toMb(rssBytes(server.pid!))
  let rssMax = rssBefore
  const healthMs: number[] = []
  let reading = true
  const polling = (async () => {
    while (reading) {
      const started = performance.now()
      await fetch(`${url}/health`)
      healthMs.push(performance.now() - started)
      rssMax = Math.max(rssMax, toMb(rssBytes(server.pid!)))
      await sleep(50)
    }
  })()
  const result = await autocannon({ url: url + path, connections: 10, duration: 10, headers: { authorization: token } })
  reading = false
  await polling
  healthMs.sort((a, b) => a - b)
  console.log(
    JSON.stringify({
      path,
      readsPerSecond: result.requests.average,
      bytesPerRead: Math.round(result.throughput.total / result.requests.total),
      non2xx: result.non2xx,
      healthP50Ms: Number(healthMs[Math.floor(healthMs.length / 2)]!.toFixed(1)),
      healthMaxMs: Number(healthMs.at(-1)!.toFixed(1)),
      rssBeforeMb: Math.round(rssBefore),
      rssMaxMb: Math.round(rssMax)
    })
  )
} finally {
  server.kill('SIGTERM')
  rmSync(folder, { recursive: true, force: true })
}

async function untilHealthy() {
  for (;;) {
    if (server.exitCode !== null) throw new Error(`the service exited (${server.exitCode})`)
    try {
      if ((await fetch(`${url}/health`)).ok) return
    } catch {
      // not listening yet
    }
    await sleep(100)
  }
}

async function postHeartbeats(token: string) {
  const headers = { authorization: token, 'content-type': 'application/json' }
  for (let batch = 0; batch < HEARTBEAT_BATCHES; batch++) {
    const heartbeats = Array.from({ length: HEARTBEATS_A_BATCH }, (_, i) => ({
      event_no: 1,
      heartbeat_id: batch * HEARTBEATS_A_BATCH + i,
      site: 'kko',
      sent: { trigger_time: '2026-01-01T00:00:00.000Z', error: null },
      received: { total_data_files: 1, dir_size_gb: 1, finished_time: null, heartbeat_sent_unix_s: 1 }
    }))
    const response = await fetch(`${url}/v1/event-tracer/heartbeats`, { method: 'POST', headers, body: JSON.stringify(heartbeats) })
    if (!response.ok) throw new Error(await response.text())
  }
}
