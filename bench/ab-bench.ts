import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { profileBoth, runAb } from './ab.js'
import { compareScenarios, grown, renderAbReport } from './ab-report.js'
import { baselineBuild, thisBuild } from './builds.js'
import type { CpuCost } from './cpu-cost.js'
import { machine, machineFacts } from './machine.js'
import { RESULTS_DIR } from './paths.js'

export interface AbBenchOptions {
  baseline: string
  rounds: number
  cpuSeconds: number
  only?: string[]
  /** Profile the scenarios held against the baseline, and write bench/results/ab-latest.md. */
  write: boolean
  profileSeconds: number
  log: (line: string) => void
}

/**
 * `BENCH_BASELINE=<commit or worktree> npm run bench`: this build beside the baseline, fresh
 * processes of each every round, then the report; a scenario whose CPU a request grew by more than
 * 5% is profiled on both builds.
 */
export async function abBench(options: AbBenchOptions): Promise<string> {
  const builds = { baseline: await baselineBuild(options.baseline), current: await thisBuild() }
  options.log(`A/B: ${builds.current.commit} beside ${builds.baseline.commit} (${builds.baseline.root}), ${options.rounds} rounds`)
  const run = await runAb(builds, {
    rounds: options.rounds,
    cpuSeconds: options.cpuSeconds,
    log: options.log,
    ...(options.only === undefined ? {} : { only: options.only })
  })
  const profiles = new Map<string, { baseline: CpuCost; current: CpuCost }>()
  const unprofiled = new Map<string, string>()
  for (const { id } of grown(compareScenarios(run.slots))) {
    if (!options.write) {
      unprofiled.set(id, 'a partial run profiles only with BENCH_WRITE=1')
      continue
    }
    try {
      profiles.set(id, await profileBoth(builds, run, id, options.profileSeconds))
      options.log(`profiled ${id} on both builds`)
    } catch (error) {
      unprofiled.set(id, error instanceof Error ? error.message : String(error))
    }
  }
  const report = renderAbReport({
    date: new Date(),
    machineFacts: machineFacts(machine()),
    baseline: builds.baseline.commit,
    current: builds.current.commit,
    rounds: options.rounds,
    cpuSeconds: options.cpuSeconds,
    run,
    profiles,
    unprofiled
  })
  if (options.write) {
    mkdirSync(RESULTS_DIR, { recursive: true })
    writeFileSync(join(RESULTS_DIR, 'ab-latest.md'), report)
    options.log('wrote bench/results/ab-latest.md')
  }
  return report
}
