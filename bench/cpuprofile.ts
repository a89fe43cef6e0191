import { readFileSync } from 'node:fs'

/** The parts of V8's .cpuprofile JSON (written by node --cpu-prof) that the summary reads. */
interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }[]
  /** Microseconds on the monotonic clock, the one process.hrtime reads on Linux. */
  startTime: number
  samples: number[]
  timeDeltas: number[]
}

/** A span of the monotonic clock in microseconds (process.hrtime.bigint() / 1000). */
export interface Span {
  startUs: number
  endUs: number
}

export interface Share {
  name: string
  ms: number
  /** Percent of the busy time: every sample but (idle), so waiting for load does not dilute the rest. */
  percent: number
}

export interface ProfileSummary {
  busyMs: number
  idleMs: number
  byFunction: Share[]
  byPackage: Share[]
  /** Time with a package anywhere on the stack (helmet's setHeader calls count for helmet too). */
  byPackageInclusive: Share[]
  /** Time inside a function or anything it called, for the functions named in `inclusiveOf`. */
  inclusive: Share[]
}

/**
 * Self time per function and per package. Each sample's time delta is charged to the frame on top
 * of the stack, as the DevTools bottom-up view does. With `during`, only the samples taken in that
 * span count: the load, without the process's start-up and shutdown.
 */
export function summariseProfile(file: string, top = 25, inclusiveOf: RegExp = /^$/, during?: Span): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]))
  const parents = new Map<number, number>()
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id)

  const selfByNode = new Map<number, number>()
  let at = profile.startTime
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0
    at += delta
    if (during !== undefined && (at < during.startUs || at > during.endUs)) return
    selfByNode.set(id, (selfByNode.get(id) ?? 0) + delta / 1000)
  })

  let idleMs = 0
  let busyMs = 0
  const byFunction = new Map<string, number>()
  const byPackage = new Map<string, number>()
  const inclusive = new Map<string, number>()
  const byPackageInclusive = new Map<string, number>()
  for (const [id, ms] of selfByNode) {
    const frame = nodes.get(id)!.callFrame
    if (frame.functionName === '(idle)') {
      idleMs += ms
      continue
    }
    busyMs += ms
    const name = `${frame.functionName || '(anonymous)'} ${location(frame.url, frame.lineNumber)}`.trim()
    byFunction.set(name, (byFunction.get(name) ?? 0) + ms)
    byPackage.set(packageOf(frame), (byPackage.get(packageOf(frame)) ?? 0) + ms)
    // Charge each named ancestor and each package once per sample stack, however often it recurs.
    const seen = new Set<string>()
    const packages = new Set<string>()
    for (let at: number | undefined = id; at !== undefined; at = parents.get(at)) {
      const ancestor = nodes.get(at)!.callFrame
      const owner = packageOf(ancestor)
      if (!packages.has(owner)) {
        packages.add(owner)
        byPackageInclusive.set(owner, (byPackageInclusive.get(owner) ?? 0) + ms)
      }
      const key = `${ancestor.functionName} ${location(ancestor.url, ancestor.lineNumber)}`
      if (!inclusiveOf.test(ancestor.functionName) || seen.has(key)) continue
      seen.add(key)
      inclusive.set(key, (inclusive.get(key) ?? 0) + ms)
    }
  }
  const ranked = (map: Map<string, number>) =>
    [...map]
      .map(([name, ms]) => ({ name, ms, percent: (100 * ms) / busyMs }))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, top)
  return {
    busyMs,
    idleMs,
    byFunction: ranked(byFunction),
    byPackage: ranked(byPackage),
    byPackageInclusive: ranked(byPackageInclusive),
    inclusive: ranked(inclusive)
  }
}

/** The npm package a frame's file belongs to, the service's own folder, node's core, or V8's pseudo-frames. */
export function packageOf(frame: { functionName: string; url: string }): string {
  const { url } = frame
  if (url === '') return frame.functionName.startsWith('(') ? frame.functionName : '(native)'
  if (url.startsWith('node:')) return 'node core'
  const inModules = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(?!.*node_modules\/)/.exec(url)
  if (inModules !== null) return inModules[1]!
  const own = /\/dist\/([^/]+\/(?:[^/]+\/)?)/.exec(url)
  return own === null ? url : `frb-tracer ${own[1]}`
}

function location(url: string, line: number): string {
  if (url === '') return ''
  const short = url.replace(/^file:\/\/.*?\/(node_modules|dist)\//, '$1/').replace(/^.*node_modules\//, '')
  return `(${short}:${line + 1})`
}

/**
 * The main thread's profile among the files `node --cpu-prof` wrote in one run
 * (CPU.<date>.<time>.<pid>.<thread>.<n>.cpuprofile, one a thread): the requests are served on
 * thread 0, and the password-hashing threads write profiles of their own.
 */
export function mainThreadProfile(names: readonly string[]): string | undefined {
  return names.filter((name) => /\.\d+\.0\.\d+\.cpuprofile$/.test(name)).sort().at(-1)
}
