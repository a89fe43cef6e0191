import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { Store } from '../src/store/port.js'
import { STAGES, stageKey, type Sites } from '../src/vocabulary.js'
import { ROOT } from './paths.js'

/**
 * `node dist/bench/store-writes.js [worktree ...]`: update-trace's write on the store alone, with no
 * HTTP around it: µs of this process's CPU a `traces.setStatus`, 20 submitted a turn as concurrent
 * requests would (so they share a commit), on a new SQLite file. Each worktree named (this one when
 * none is) is measured through its own built code (`dist/`), so two commits compare without their
 * HTTP layers, the machine's load generator or the age of a store: what the A/B bench cannot
 * separate. Pin it to a core (`taskset -c 1`) and alternate the worktrees for a comparison.
 */

const TURNS = 2000
const WARM_TURNS = 200
const WRITES_A_TURN = 20

interface Build {
  openSqliteStore(path: string, sites: Sites): Store
  loadConfig(env: Record<string, string>): { TRACER_SITES: Sites }
}

async function buildAt(worktree: string): Promise<Build> {
  // Another commit's modules: typed as this commit's, which they match in what is used here.
  const module = <T>(path: string) => import(pathToFileURL(join(worktree, 'dist', path)).href) as Promise<T>
  const [store, config] = await Promise.all([module<Pick<Build, 'openSqliteStore'>>('src/store/sqlite/store.js'), module<Pick<Build, 'loadConfig'>>('src/config.js')])
  return { openSqliteStore: store.openSqliteStore, loadConfig: config.loadConfig }
}

/** µs of CPU a write, over TURNS turns after WARM_TURNS. Keys are those of the configured sites, events new ones in turn. */
async function measure(build: Build): Promise<number> {
  const folder = mkdtempSync(join(tmpdir(), 'store-writes-'))
  const sites = build.loadConfig({}).TRACER_SITES
  const store = build.openSqliteStore(join(folder, 'writes.sqlite'), sites)
  try {
    const keys = sites.names.flatMap((site) => STAGES.map((stage) => stageKey(stage, site)))
    let written = 0
    const turn = async () => {
      const writes: Promise<boolean>[] = []
      for (let i = 0; i < WRITES_A_TURN; i++, written++) {
        writes.push(store.traces.setStatus(100_000 + Math.floor(written / keys.length), keys[written % keys.length]!, 'complete', Date.now() / 1000, 'bench'))
      }
      await Promise.all(writes)
    }
    for (let i = 0; i < WARM_TURNS; i++) await turn()
    const before = process.cpuUsage()
    for (let i = 0; i < TURNS; i++) await turn()
    const spent = process.cpuUsage(before)
    return (spent.user + spent.system) / (TURNS * WRITES_A_TURN)
  } finally {
    await store.close()
    rmSync(folder, { recursive: true, force: true })
  }
}

const worktrees = process.argv.length > 2 ? process.argv.slice(2).map((path) => resolve(path)) : [ROOT]
for (const worktree of worktrees) {
  const micros = await measure(await buildAt(worktree))
  process.stdout.write(`${worktree}: ${micros.toFixed(2)} µs of CPU a setStatus (${TURNS * WRITES_A_TURN} writes, ${WRITES_A_TURN} a turn)\n`)
}
