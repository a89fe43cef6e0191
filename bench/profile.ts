import { summariseProfile, type Share } from './cpuprofile.js'
import { stopChildrenOnSignals } from './processes.js'
import { profileScenario } from './profiling.js'
import { prepareBench } from './setup.js'

/**
 * `node dist/bench/profile.js <scenario-id> [seconds] [function-pattern]`: runs one bench scenario
 * against a service started with --cpu-prof and prints where its CPU time went while the load ran.
 * The profile file stays in bench/.profiles for DevTools. The optional pattern names functions (a
 * regular expression on their names) whose inclusive time is also shown.
 */
async function main(): Promise<void> {
  const [id, secondsText = '10', pattern] = process.argv.slice(2)
  if (id === undefined) throw new Error('usage: node dist/bench/profile.js <scenario-id> [seconds] [function-pattern]')
  stopChildrenOnSignals()
  const bench = await prepareBench()
  const { result, file, during } = await profileScenario(bench, id, Number(secondsText))
  process.stdout.write(`${id}: ${Math.round(result.rps)} req/s, p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms under --cpu-prof\n`)
  const summary = summariseProfile(file, 25, pattern === undefined ? /^$/ : new RegExp(pattern), during)
  const print = (title: string, shares: Share[]) => {
    process.stdout.write(`\n${title}\n`)
    for (const share of shares) process.stdout.write(`${share.percent.toFixed(1).padStart(6)}%  ${share.ms.toFixed(0).padStart(7)} ms  ${share.name}\n`)
  }
  process.stdout.write(
    `\n${file}\nwhile the load ran: busy ${summary.busyMs.toFixed(0)} ms, idle ${summary.idleMs.toFixed(0)} ms, ` +
      `${(summary.busyMs / result.responses).toFixed(3)} ms of CPU a request (${result.responses} requests)\n`
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
