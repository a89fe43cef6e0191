import type { LoadResult } from '../../bench/load.js'
import type { FullYearResult } from '../../bench/full-year.js'
import type { MemoryBreakdown } from '../../bench/memory.js'
import type { ScenarioSummary } from '../../bench/summary.js'
import type { ReportInput } from '../../bench/table.js'
import type { CpuCost } from '../../bench/cpu-cost.js'

/** One round of a scenario: what runLoad measures, with the figures a test sets. */
export function round(figures: Partial<LoadResult> = {}): LoadResult {
  return {
    seconds: 6,
    responses: 6000,
    rps: 1000,
    p50: 1,
    p99: 5,
    autocannonP99: 5,
    statusCounts: { 200: 6000 },
    transportErrors: 0,
    timeouts: 0,
    peakRssMb: 100,
    lastRssMb: 95,
    serverCores: 0.9,
    loadGeneratorCores: 0.4,
    serverCpuUsPerRequest: 150,
    ...figures
  }
}

/** A scenario summarised over one round, as summarise() would make it. */
export function summary(id: string, figures: Partial<LoadResult> = {}, extra: Partial<ScenarioSummary> = {}): ScenarioSummary {
  const only = round(figures)
  return {
    scenario: { id, title: `title of ${id}`, server: id === 'bare' ? 'bare' : id.endsWith('workers') ? 'workers' : 'service', connections: 10, expectedStatus: 200 },
    rounds: [only],
    median: only,
    unexpectedStatuses: 0,
    transportErrors: 0,
    timeouts: 0,
    peakRssMb: only.peakRssMb,
    ...extra
  }
}

export function fullYear(increaseMb: number): FullYearResult {
  return { baselineMb: 90, peakMb: 90 + increaseMb, increaseMb, rows: 63_000, megabytes: 60, seconds: 1.4, memory: memory(120) }
}

export function memory(rssMb: number): MemoryBreakdown {
  return { rssMb, heapTotalMb: 70, heapUsedMb: 50, externalMb: 5, restMb: rssMb - 75 }
}

export function cpuCost(scenario: string, msPerRequest: number): CpuCost {
  const share = (name: string, percent: number) => ({ name, ms: percent * 10, percent })
  return {
    scenario,
    seconds: 6,
    requests: 1000,
    busyMs: msPerRequest * 1000,
    msPerRequest,
    byPackage: [share('better-sqlite3', 40), share('frb-tracer src/', 20), share('(garbage collector)', 15), share('node core', 10), share('fastify', 5)],
    byFunction: [share('all (better-sqlite3/lib/methods/wrappers.js:1)', 30), share('join (dist/src/x.js:3)', 9), share('writev (node:net:1)', 6)],
    file: `bench/.profiles/${scenario}/CPU.cpuprofile`
  }
}

/** A whole run's input to the renderers: every scenario with a target, all met unless a test says otherwise. */
export function reportInput(summaries: ScenarioSummary[], overrides: Partial<ReportInput> = {}): ReportInput {
  return {
    date: new Date('2026-11-23T16:05:35.303Z'),
    machine: { cpu: 'AMD EPYC', cores: 2, memoryGiB: 23.5, node: 'v20.20.2', os: 'Debian', commit: '548c6f84151bffc3d3b506978972302b63a849e5' },
    store: {
      path: '/tmp/bench.sqlite',
      spec: { name: 'bench-1m', events: 1_000_000, days: 1095, seed: 1 },
      seedSeconds: 17,
      seededAt: '2026-11-23T12:54:24.439Z',
      reused: true,
      oldest: Date.parse('2023-11-24T12:55:06.952Z'),
      newest: Date.parse('2026-11-23T12:52:39.748Z')
    },
    rounds: 1,
    roundSeconds: 6,
    summaries,
    singleConnection: new Map(),
    cpuOfOthers: { othersPercent: 3, stealPercent: 0 },
    fullYear: [fullYear(21)],
    fullYearAudit: [{ ...fullYear(20), seconds: 0.7 }],
    baseline: { commit: '958e2071c8364bed9ec90ba857bbe559f9c055ba', date: '2026-11-25T18:38:17.090Z', rows: new Map([['title of update-trace', { rps: 5000, p99: 8 }]]) },
    slowReaders: { idleMb: 80, peakMb: 111, growthMb: 31, streaming: 32, refused: 68 },
    fairShares: {
      rounds: [
        { alone: 1000, withStreams: 700 },
        { alone: 1000, withStreams: 600 },
        { alone: 1000, withStreams: 800 }
      ],
      ratio: 0.7,
      readBytes: 12_000_000
    },
    longHistory: {
      transitions: 1_000_000,
      healthP95Ms: 12.4,
      healthMaxMs: 31.2,
      healthAnswers: 400,
      partsBeside: 5200,
      statusesBeside: { 200: 5200 },
      parts: 1001,
      partMaxMs: 18.3,
      partP50Ms: 4.1
    },
    lockHeld: {
      holdMs: 12_000,
      healthAnswers: 500,
      healthP95Ms: 3.1,
      healthMaxMs: 9.2,
      readAnswers: 500,
      readMaxMs: 15.8,
      statuses: { '/health 200': 500, 'event-status 200': 500, 'update-trace 200': 2, 'update-trace 503': 2 },
      writesRefused: 2,
      refusedWithRetryAfter: 2
    },
    ...overrides
  }
}

/** Every scenario that carries a target, each meeting it. */
export function allMet(): ScenarioSummary[] {
  return [
    summary('bare', { rps: 20_000 }),
    summary('verify', { rps: 16_000 }, { ratioToBare: 0.8 }),
    summary('event-status', { p99: 5 }),
    summary('callbacks-1d', { p99: 15 }),
    summary('events-page1', { p99: 8 }),
    summary('events-page500', { p99: 8 }),
    summary('audit-1d', { p99: 20 }),
    summary('update-trace', { rps: 6000 }, { writes: { acknowledged: 36_000, lost: 0 } })
  ]
}
