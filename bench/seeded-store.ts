import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadConfig } from '../src/config.js'
import { openSqliteStore } from '../src/store/sqlite/store.js'
import { runCli } from './processes.js'
import { DATA_DIR } from './paths.js'

export interface SeedSpec {
  /** File name stem under bench/.data: one store per spec, so the bench and the soak never share one. */
  name: string
  events: number
  days: number
  seed: number
}

/** Written only after the seed command succeeded: a store without it is half-made and is rebuilt. */
interface Marker extends SeedSpec {
  seconds: number
  finishedAt: string
}

export interface SeededStore {
  path: string
  spec: SeedSpec
  /** Wall time of the seed command (process start to exit), now or when the store was made. */
  seedSeconds: number
  seededAt: string
  reused: boolean
  /** Event times (ms) of the oldest and newest stored events: query windows are placed between them. */
  oldest: number
  newest: number
}

/**
 * A store seeded with `tracer seed --demo`, reused while its marker names the same spec. The seeded
 * events end at the time of seeding, not now, so callers read the range back instead of assuming it.
 */
export async function ensureSeededStore(spec: SeedSpec): Promise<SeededStore> {
  mkdirSync(DATA_DIR, { recursive: true })
  const path = join(DATA_DIR, `${spec.name}.sqlite`)
  const markerPath = `${path}.complete.json`
  const marker = readMarker(markerPath)
  let reused = marker !== undefined && sameSpec(marker, spec) && existsSync(path)
  let seconds = marker?.seconds ?? 0
  let finishedAt = marker?.finishedAt ?? ''
  if (!reused) {
    for (const file of [markerPath, path, `${path}-wal`, `${path}-shm`]) rmSync(file, { force: true })
    process.stderr.write(`bench: seeding ${spec.events} events over ${spec.days} days into ${path}\n`)
    const started = performance.now()
    const result = await runCli(
      ['seed', '--demo', '--events', String(spec.events), '--days', String(spec.days), '--seed', String(spec.seed)],
      { TRACER_DB: path },
      { inheritStderr: true }
    )
    seconds = (performance.now() - started) / 1000
    if (result.status !== 0) throw new Error(`tracer seed failed (${result.status}): ${result.stdout}`)
    process.stderr.write(`bench: ${result.stdout.trim()} (wall ${seconds.toFixed(1)} s)\n`)
    finishedAt = new Date().toISOString()
    writeFileSync(markerPath, JSON.stringify({ ...spec, seconds, finishedAt } satisfies Marker, null, 2) + '\n')
    reused = false
  }
  const { oldest, newest } = await eventRange(path)
  return { path, spec, seedSeconds: seconds, seededAt: finishedAt, reused, oldest, newest }
}

function readMarker(path: string): Marker | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Marker
  } catch {
    return undefined
  }
}

const sameSpec = (a: SeedSpec, b: SeedSpec) => a.events === b.events && a.days === b.days && a.seed === b.seed

/** The first and last event times, through the store's own port (two index probes). */
async function eventRange(path: string): Promise<{ oldest: number; newest: number }> {
  const store = openSqliteStore(path, loadConfig({}).TRACER_SITES)
  try {
    const window = { start: 0, end: Number.MAX_SAFE_INTEGER }
    const [first] = await store.events.page({ window, order: 'asc', limit: 1 })
    const [last] = await store.events.page({ window, order: 'desc', limit: 1 })
    if (first === undefined || last === undefined) throw new Error(`${path} holds no events`)
    return { oldest: first.position.timestamp, newest: last.position.timestamp }
  } finally {
    await store.close()
  }
}
