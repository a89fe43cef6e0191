import { randomBytes } from 'node:crypto'
import { loadConfig } from '../src/config.js'
import { startService, type RunningServer } from './processes.js'
import { eventsWindow, page500Cursor, type ScenarioContext } from './scenarios.js'
import { ensureSeededStore, type SeededStore, type SeedSpec } from './seeded-store.js'
import { ensureWriter, expiredToken, logIn, type BenchUser } from './tokens.js'
import { UpdateTraceWrites } from './update-trace.js'

/** Issue 5: a million events over three years, with traces, datatrail and heartbeats. */
export const BENCH_STORE: SeedSpec = { name: 'bench-1m', events: 1_000_000, days: 1095, seed: 1 }

export interface Bench {
  store: SeededStore
  user: BenchUser
  /** A fresh secret per run: the service and the expired token must share it, nothing else needs it. */
  secret: string
  sites: string[]
  /** Starts another service on the bench store (node options such as --cpu-prof first; WORKERS). */
  startService(nodeArgs?: string[], workers?: number): Promise<RunningServer>
}

/** The store (seeded or reused) and a writer user on it; no server runs yet. */
export async function prepareBench(spec: SeedSpec = BENCH_STORE): Promise<Bench> {
  const store = await ensureSeededStore(spec)
  const user = await ensureWriter(store.path)
  const secret = randomBytes(48).toString('base64url')
  // The service's own default sites: the bench starts it without TRACER_SITES.
  const sites = [...loadConfig({}).TRACER_SITES.names]
  return {
    store,
    user,
    secret,
    sites,
    startService: (nodeArgs = [], workers = 1) => startService({ db: store.path, jwtSecret: secret, nodeArgs, workers })
  }
}

/** Logs in to `service` and finds what the scenarios need from it (the page-500 cursor). */
export async function scenarioContext(bench: Bench, service: RunningServer): Promise<ScenarioContext> {
  const token = await logIn(service.url, bench.user)
  const window = eventsWindow(bench.store.newest)
  const writes = new UpdateTraceWrites(bench.store.path, bench.sites)
  return {
    token,
    expiredToken: expiredToken(bench.secret, bench.user.name),
    username: bench.user.name,
    password: bench.user.password,
    eventCount: bench.store.spec.events,
    oldest: bench.store.oldest,
    newest: bench.store.newest,
    eventsWindow: window,
    page500Cursor: await page500Cursor(service.url, token, window),
    updateTrace: (writerToken) => writes.prepare(writerToken)
  }
}
