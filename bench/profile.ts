import { mkdirSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { summariseProfile, type Share } from './cpuprofile.js'
import { runLoad } from './load.js'
import { PROFILES_DIR } from './paths.js'
import { startBareServer, stopChildrenOnSignals, type RunningServer } from './processes.js'
import { scenarios } from './scenarios.js'
import { prepareBench, scenarioContext } from './setup.js'

/**
 * `node dist/bench/profile.js <scenario-id> [seconds] [function-pattern]`: runs one bench scenario
 * against a service started with --cpu-prof and prints where its CPU time went. The profile file
 * stays in bench/.profiles for DevTools. The optional pattern names functions (a regular
 * expression on their names) whose inclusive time is also shown.
 */
async function main(): Promise<void> {
  const [id, secondsText = '10', pattern] = process.argv.slice(2)
  if (id === undefined) throw new Error('usage: node dist/bench/profile.js <scenario-id> [seconds] [function-pattern]')
  stopChildrenOnSignals()
  const bench = await prepareBench()
  const dir = join(PROFILES_DIR, `${id}-${new Date().toISOString().replace(/[:.]/g, '-')}`)
  mkdirSync(dir, { recursive: true })
  let service: RunningServer | undefined
  let bare: RunningServer | undefined
  try {
    service = await bench.startService(['--cpu-prof', `--cpu-prof-dir=${dir}`])
    const scenario = scenarios(await scenarioContext(bench, service)).find((candidate) => candidate.id === id)
    if (scenario === undefined) throw new Error(`no scenario ${id}`)
    if (scenario.server === 'workers') throw new Error(`${id} runs on several workers: profile the one-process scenario instead (each worker runs its code)`)
    if (scenario.server === 'bare') bare = await startBareServer()
    const server = scenario.server === 'bare' ? bare! : service
    const { requests, check } = scenario.prepare()
    const result = await runLoad({ url: server.url, pid: server.pid, connections: scenario.connections, seconds: Number(secondsText), requests })
    await check?.()
    process.stdout.write(
      `${id}: ${Math.round(result.rps)} req/s, p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms under --cpu-prof\n`
    )
  } finally {
    // The profile is written when the process exits: a graceful SIGTERM lets it.
    await service?.stop()
    await bare?.stop()
  }
  const file = readdirSync(dir)
    .filter((name) => name.endsWith('.cpuprofile'))
    .map((name) => join(dir, name))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0]
  if (file === undefined) throw new Error(`no .cpuprofile in ${dir}`)
  const summary = summariseProfile(file, 25, pattern === undefined ? /^$/ : new RegExp(pattern))
  const print = (title: string, shares: Share[]) => {
    process.stdout.write(`\n${title}\n`)
    for (const share of shares) process.stdout.write(`${share.percent.toFixed(1).padStart(6)}%  ${share.ms.toFixed(0).padStart(7)} ms  ${share.name}\n`)
  }
  process.stdout.write(
    `\n${file}\nbusy ${summary.busyMs.toFixed(0)} ms, idle ${summary.idleMs.toFixed(0)} ms (start-up and shutdown included)\n`
  )
  print('Self time by package', summary.byPackage)
  print('Inclusive time by package (anywhere on the stack)', summary.byPackageInclusive)
  print('Self time by function', summary.byFunction)
  if (pattern !== undefined) print(`Inclusive time of /${pattern}/`, summary.inclusive)
}

await main().catch((error: unknown) => {
  process.stderr.write(`profile: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  process.exitCode = 1
})
