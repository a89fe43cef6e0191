import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import Fastify from 'fastify'
import { buildApp } from '../src/app.js'
import { hashPassword } from '../src/auth/passwords.js'
import { loadConfig } from '../src/config.js'
import { serveEnvironment, serveNodeOptions } from '../src/package-info.js'
import { openStore } from '../src/store/open.js'
import { summariseProfile, type Share, type Span } from './cpuprofile.js'
import { runLoad } from './load.js'
import { PROFILES_DIR } from './paths.js'
import { stop } from './processes.js'
import { logIn } from './tokens.js'

/**
 * `node dist/bench/verify-beside-bare.js [seconds] [rounds] [--cpu-prof [--inclusive=REGEX]]`: GET /auth/verify of the
 * service and the bare route of bench/bare-server.ts, served by one process on two ports, loaded in
 * turns (bare first, then verify, each `seconds`, `rounds` times). Prints each one's µs of CPU a
 * request and the bare route's share of verify's; with --cpu-prof, the self time of each while its
 * load ran, side by side, from one profile of that process: what verify pays beyond the bare route,
 * in the same process, heap and JIT; with --inclusive, also the inclusive time of the functions whose
 * names match. The process runs with `npm start`'s node options and environment.
 */

const BARE_ROUTE_SCHEMA = {
  response: {
    200: { type: 'object', properties: { valid: { type: 'boolean' } }, required: ['valid'], additionalProperties: false }
  }
} as const

/** The child: the service's app on a temporary store, and the bare route (as bench/bare-server.ts builds it) beside it. */
async function serve(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'verify-beside-bare-'))
  const config = loadConfig({
    NODE_ENV: 'production',
    TRACER_DB: join(dir, 'tracer.sqlite'),
    JWT_SECRET: randomBytes(48).toString('base64url'),
    LOG_LEVEL: 'info'
  })
  const app = await buildApp({ config, store: await openStore(config) })
  const password = randomBytes(12).toString('base64url')
  await app.store.users.create({ name: 'bench', role: 'reader', password_hash: await hashPassword(password), created_at: Date.now() })
  // As the bench starts bench/bare-server.ts: at warn, Fastify logs no request.
  const bare = Fastify({ logger: { level: 'warn' } })
  bare.get('/auth/verify', { schema: BARE_ROUTE_SCHEMA }, async () => ({ valid: true }))
  const service = await app.listen({ port: 0, host: '127.0.0.1' })
  const bareUrl = await bare.listen({ port: 0, host: '127.0.0.1' })
  process.stdout.write(JSON.stringify({ service, bare: bareUrl, password }) + '\n')
  process.once('SIGTERM', () => {
    void Promise.all([app.close(), bare.close()]).then(() => {
      rmSync(dir, { recursive: true, force: true })
      process.exit(0)
    })
  })
}

const nowUs = () => Number(process.hrtime.bigint() / 1000n)

async function main(): Promise<void> {
  const args = process.argv.slice(2)
  const profile = args.includes('--cpu-prof')
  const inclusiveOf = new RegExp(args.find((arg) => arg.startsWith('--inclusive='))?.slice('--inclusive='.length) ?? '^$')
  const [secondsText = '5', roundsText = '3'] = args.filter((arg) => !arg.startsWith('--'))
  const seconds = Number(secondsText)
  const rounds = Number(roundsText)
  const profileDir = join(PROFILES_DIR, `verify-beside-bare-${new Date().toISOString().replace(/[:.]/g, '-')}`)
  if (profile) mkdirSync(profileDir, { recursive: true })
  const child = spawn(
    process.execPath,
    [...serveNodeOptions, ...(profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []), new URL(import.meta.url).pathname, 'serve'],
    { env: { PATH: process.env.PATH ?? '', ...serveEnvironment }, stdio: ['ignore', 'pipe', 'inherit'] }
  )
  const ready = await new Promise<{ service: string; bare: string; password: string }>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line.startsWith('{"service"')) resolve(JSON.parse(line) as { service: string; bare: string; password: string })
    })
    child.once('exit', (code) => reject(new Error(`the server exited (${code})`)))
  })
  const token = await logIn(ready.service, { name: 'bench', password: ready.password })
  const request = { method: 'GET' as const, path: '/auth/verify', headers: { authorization: token } }
  const spans: Record<'bare' | 'verify', Span[]> = { bare: [], verify: [] }
  const cpu: Record<'bare' | 'verify', number[]> = { bare: [], verify: [] }
  const answered: Record<'bare' | 'verify', number> = { bare: 0, verify: 0 }
  const rates: Record<'bare' | 'verify', number[]> = { bare: [], verify: [] }
  try {
    // A warm-up of each, not counted.
    for (const url of [ready.bare, ready.service]) await runLoad({ url, pid: child.pid!, connections: 50, seconds: 2, requests: [request] })
    for (let round = 0; round < rounds; round++) {
      for (const [name, url] of [['bare', ready.bare], ['verify', ready.service]] as const) {
        const startUs = nowUs()
        const result = await runLoad({ url, pid: child.pid!, connections: 50, seconds, requests: [request] })
        spans[name].push({ startUs, endUs: nowUs() })
        cpu[name].push(result.serverCpuUsPerRequest)
        rates[name].push(result.rps)
        answered[name] += result.responses
        const unexpected = Object.entries(result.statusCounts).filter(([status]) => status !== '200')
        if (unexpected.length > 0) throw new Error(`${name}: statuses ${JSON.stringify(result.statusCounts)}`)
      }
      const share = (cpu.bare[round]! / cpu.verify[round]!) * 100
      process.stdout.write(
        `round ${round + 1} (${Math.round(rates.bare[round]!)} and ${Math.round(rates.verify[round]!)} req/s): bare ${cpu.bare[round]!.toFixed(1)} µs, verify ${cpu.verify[round]!.toFixed(1)} µs of CPU a request; share ${share.toFixed(1)}%\n`
      )
    }
  } finally {
    await stop(child)
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
  process.stdout.write(
    `median: bare ${median(cpu.bare).toFixed(1)} µs, verify ${median(cpu.verify).toFixed(1)} µs; share ${((median(cpu.bare) / median(cpu.verify)) * 100).toFixed(1)}%${profile ? ' (under --cpu-prof)' : ''}\n`
  )
  if (!profile) return
  const file = readdirSync(profileDir).find((name) => name.endsWith('.cpuprofile'))
  if (file === undefined) throw new Error(`no .cpuprofile in ${profileDir}`)
  const path = join(profileDir, file)
  const summaries = Object.fromEntries(
    (['bare', 'verify'] as const).map((name) => {
      const parts = spans[name].map((span) => summariseProfile(path, 1000, inclusiveOf, span))
      const total = (pick: (summary: ReturnType<typeof summariseProfile>) => Share[]) => {
        const sums = new Map<string, number>()
        for (const part of parts) for (const share of pick(part)) sums.set(share.name, (sums.get(share.name) ?? 0) + share.ms)
        return sums
      }
      return [
        name,
        {
          busyMs: parts.reduce((sum, part) => sum + part.busyMs, 0),
          byFunction: total((s) => s.byFunction),
          byPackage: total((s) => s.byPackage),
          inclusive: total((s) => s.inclusive)
        }
      ]
    })
  ) as Record<'bare' | 'verify', { busyMs: number; byFunction: Map<string, number>; byPackage: Map<string, number>; inclusive: Map<string, number> }>
  const perRequest = (which: 'bare' | 'verify', ms: number) => (ms * 1000) / answered[which]
  process.stdout.write(
    `\n${path}\nµs of the main thread a request under the profiler: bare ${perRequest('bare', summaries.bare.busyMs).toFixed(2)}, ` +
      `verify ${perRequest('verify', summaries.verify.busyMs).toFixed(2)}\n`
  )
  const sideBySide = (title: string, pick: (summary: (typeof summaries)['bare']) => Map<string, number>) => {
    const names = new Set([...pick(summaries.bare).keys(), ...pick(summaries.verify).keys()])
    const rows = [...names].map((name) => {
      const us = (which: 'bare' | 'verify') => perRequest(which, pick(summaries[which]).get(name) ?? 0)
      return { name, bare: us('bare'), verify: us('verify') }
    })
    rows.sort((a, b) => Math.abs(b.verify - b.bare) - Math.abs(a.verify - a.bare))
    process.stdout.write(`\n${title}, µs a request, by the difference\n${'bare'.padStart(7)} ${'verify'.padStart(7)} ${'diff'.padStart(7)}\n`)
    for (const row of rows.slice(0, 40)) {
      process.stdout.write(`${row.bare.toFixed(2).padStart(7)} ${row.verify.toFixed(2).padStart(7)} ${(row.verify - row.bare).toFixed(2).padStart(7)}  ${row.name}\n`)
    }
  }
  sideBySide('Self time by package', (summary) => summary.byPackage)
  sideBySide('Self time by function', (summary) => summary.byFunction)
  if (inclusiveOf.source !== '^$') sideBySide(`Inclusive time of /${inclusiveOf.source}/`, (summary) => summary.inclusive)
}

if (process.argv[2] === 'serve') await serve()
else
  await main().catch((error: unknown) => {
    process.stderr.write(`verify-beside-bare: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    process.exitCode = 1
  })
