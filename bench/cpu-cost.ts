import { relative } from 'node:path'
import { summariseProfile, type Share } from './cpuprofile.js'
import { ROOT } from './paths.js'
import type { ScenarioProfile } from './profiling.js'

/** What a scenario's CPU profile says, short enough for a report: the cost of a request and where it goes. */
export interface CpuCost {
  scenario: string
  seconds: number
  requests: number
  /** CPU time of the service's main thread while the load ran (V8's samples other than idle). */
  busyMs: number
  msPerRequest: number
  /** Self time, the top 5 packages and the top 8 functions. */
  byPackage: Share[]
  byFunction: Share[]
  /** The .cpuprofile, relative to the repository. */
  file: string
}

const TOP_PACKAGES = 5
const TOP_FUNCTIONS = 8

export function cpuCost(profile: ScenarioProfile): CpuCost {
  const summary = summariseProfile(profile.file, TOP_FUNCTIONS, /^$/, profile.during)
  const requests = profile.result.responses
  return {
    scenario: profile.id,
    seconds: profile.result.seconds,
    requests,
    busyMs: summary.busyMs,
    msPerRequest: requests > 0 ? summary.busyMs / requests : Number.NaN,
    byPackage: summary.byPackage.slice(0, TOP_PACKAGES),
    byFunction: summary.byFunction,
    file: relative(ROOT, profile.file)
  }
}
