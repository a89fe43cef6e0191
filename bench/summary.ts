import { unexpectedStatuses, type LoadResult } from './load.js'
import type { Scenario } from './scenarios.js'
import type { WriteCheck } from './update-trace.js'

/** One scenario over all rounds: the median round for speed, the worst round for memory and errors. */
export interface ScenarioSummary {
  scenario: Pick<Scenario, 'id' | 'title' | 'server' | 'connections' | 'expectedStatus'>
  rounds: LoadResult[]
  /** The round with the median requests/s; its latencies are reported with it. */
  median: LoadResult
  /** Summed over rounds: a single bad round must not hide behind the median. */
  unexpectedStatuses: number
  transportErrors: number
  timeouts: number
  /** The highest RSS sampled in any round. */
  peakRssMb: number
  /** Median over rounds of (this round's req/s) / (the bare route's req/s in the same round). */
  ratioToBare?: number
  writes?: WriteCheck
}

export function summarise(
  scenario: ScenarioSummary['scenario'],
  rounds: LoadResult[],
  bareRounds: LoadResult[] | undefined,
  writes: WriteCheck[]
): ScenarioSummary {
  const byRate = [...rounds].sort((a, b) => a.rps - b.rps)
  const median = byRate[Math.floor((byRate.length - 1) / 2)]!
  const ratios = bareRounds === undefined ? [] : rounds.map((round, i) => round.rps / bareRounds[i]!.rps).sort((a, b) => a - b)
  return {
    scenario,
    rounds,
    median,
    unexpectedStatuses: rounds.reduce((sum, round) => sum + unexpectedStatuses(round.statusCounts, scenario.expectedStatus), 0),
    transportErrors: rounds.reduce((sum, round) => sum + round.transportErrors, 0),
    timeouts: rounds.reduce((sum, round) => sum + round.timeouts, 0),
    peakRssMb: Math.max(...rounds.map((round) => round.peakRssMb)),
    ...(ratios.length === 0 ? {} : { ratioToBare: ratios[Math.floor((ratios.length - 1) / 2)]! }),
    ...(writes.length === 0
      ? {}
      : {
          writes: {
            acknowledged: writes.reduce((sum, check) => sum + check.acknowledged, 0),
            lost: writes.reduce((sum, check) => sum + check.lost, 0)
          }
        })
  }
}
