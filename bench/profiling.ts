import { mkdirSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { mainThreadProfile, type Span } from './cpuprofile.js'
import { runLoad, type LoadResult } from './load.js'
import { PROFILES_DIR } from './paths.js'
import type { RunningServer } from './processes.js'
import { scenarios } from './scenarios.js'
import { scenarioContext, type Bench } from './setup.js'

export interface ScenarioProfile {
  id: string
  result: LoadResult
  /** The .cpuprofile V8 wrote when the service exited (DevTools opens it). */
  file: string
  /** When the load ran, on the clock the profile's samples are stamped with. */
  during: Span
}

/** The monotonic clock in microseconds: V8's profiler stamps its samples with the same clock (CLOCK_MONOTONIC on Linux). */
const nowUs = () => Number(process.hrtime.bigint() / 1000n)

/**
 * Runs one bench scenario for `seconds` against a service of its own started with --cpu-prof, and
 * returns the profile it wrote. The bench's misses and `profile.js` both come here.
 */
export async function profileScenario(bench: Bench, id: string, seconds: number): Promise<ScenarioProfile> {
  const dir = join(PROFILES_DIR, `${id}-${new Date().toISOString().replace(/[:.]/g, '-')}`)
  mkdirSync(dir, { recursive: true })
  let service: RunningServer | undefined
  let run: { result: LoadResult; during: Span }
  try {
    service = await bench.startService(['--cpu-prof', `--cpu-prof-dir=${dir}`])
    const scenario = scenarios(await scenarioContext(bench, service)).find((candidate) => candidate.id === id)
    if (scenario === undefined) throw new Error(`no scenario ${id}`)
    // The profiled process is the one-process service: the bare route and workers are other processes.
    if (scenario.server !== 'service') throw new Error(`${id} does not run on the one-process service: profile a scenario that does`)
    const { requests, check } = scenario.prepare()
    const startUs = nowUs()
    const result = await runLoad({ url: service.url, pid: service.pid, connections: scenario.connections, seconds, requests })
    run = { result, during: { startUs, endUs: nowUs() } }
    await check?.()
  } finally {
    // The profile is written when the process exits: a graceful SIGTERM lets it.
    await service?.stop()
  }
  const name = mainThreadProfile(readdirSync(dir))
  if (name === undefined) throw new Error(`no main-thread .cpuprofile in ${dir}`)
  return { id, file: join(dir, name), ...run }
}
