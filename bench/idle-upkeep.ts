import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { startCpuAccounting } from './cpu-share.js'
import { machine } from './machine.js'
import { RESULTS_DIR } from './paths.js'
import { cpuSeconds } from './process-tree.js'
import { stopChildrenOnSignals } from './processes.js'
import { openKeptDatabase } from '../src/store/sqlite/native-lifetimes.js'
import { VERIFY_EVERY_MS, VERIFY_PAGE } from '../src/kept-audit/upkeep.js'
import { prepareBench } from './setup.js'

/**
 * `node dist/bench/idle-upkeep.js [seconds]`: what the kept audit's upkeep costs a service that
 * serves nothing. It starts the service on the bench store, lets its start-up settle, then reads
 * the CPU time of the process over the given window (60 s by default) with no request made, and
 * the verifier's progress from /metrics over the same window: the CPU share of one core it takes,
 * and how long a full pass over the store takes at that pace. Writes
 * bench/results/idle-upkeep-<date>.md and prints it.
 */

const SECONDS = Number(process.argv[2] ?? 60)
const SETTLE_SECONDS = 10

async function metric(url: string, series: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text()
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `))
  return line === undefined ? Number.NaN : Number(line.slice(series.length + 1))
}

stopChildrenOnSignals()
const bench = await prepareBench()
const service = await bench.startService()
try {
  await sleep(SETTLE_SECONDS * 1000)
  const others = startCpuAccounting()
  const rowsBefore = await metric(service.url, 'tracer_audit_verify_pass_rows')
  const lastBefore = await metric(service.url, 'tracer_audit_verify_last_pass_rows')
  const cpuBefore = cpuSeconds([service.pid])
  const started = performance.now()
  await sleep(SECONDS * 1000)
  const cpu = cpuSeconds([service.pid]) - cpuBefore
  const elapsed = (performance.now() - started) / 1000
  const rowsAfter = await metric(service.url, 'tracer_audit_verify_pass_rows')
  const lastAfter = await metric(service.url, 'tracer_audit_verify_last_pass_rows')
  const share = others()
  // A pass that ended inside the window: its rows, then the new pass's.
  const checked = lastAfter !== lastBefore || rowsAfter < rowsBefore ? lastAfter - rowsBefore + rowsAfter : rowsAfter - rowsBefore
  const perSecond = checked / elapsed
  const db = openKeptDatabase(bench.store.path, { readonly: true })
  const kept = db.prepare('SELECT count(*) FROM audits').pluck().get() as number
  db.close()
  const fastest = (VERIFY_PAGE * 1000) / VERIFY_EVERY_MS
  const lines = [
    `# The kept audit's upkeep on an idle service (${new Date().toISOString().slice(0, 10)})`,
    '',
    `Command: \`npm run build && node dist/bench/idle-upkeep.js ${SECONDS}\` on the bench store (${bench.store.spec.events.toLocaleString('en')} events), ${machine().cores} cores (${machine().cpu}).`,
    `No request was made in the ${elapsed.toFixed(1)} s measured (after ${SETTLE_SECONDS} s of start-up); other processes used ${share.othersPercent.toFixed(1)}% of the machine.`,
    '',
    '| what | figure |',
    '| --- | ---: |',
    `| CPU of the service process | ${cpu.toFixed(2)} s in ${elapsed.toFixed(1)} s: **${((100 * cpu) / elapsed).toFixed(1)}% of one core** |`,
    `| kept audits checked | ${checked.toLocaleString('en')} (${perSecond.toFixed(0)} a second) |`,
    `| kept audits in the store | ${kept.toLocaleString('en')} |`,
    `| a full pass of this store at this pace (spaced by its size) | ${(kept / perSecond / 60).toFixed(0)} minutes |`,
    `| a full pass of a million at the fastest pace (${VERIFY_PAGE} every ${VERIFY_EVERY_MS} ms) | ${(1_000_000 / fastest / 60).toFixed(0)} minutes |`,
    ''
  ]
  const report = lines.join('\n')
  writeFileSync(join(RESULTS_DIR, `idle-upkeep-${new Date().toISOString().slice(0, 10)}.md`), report)
  process.stdout.write(report)
} finally {
  await service.stop()
}
