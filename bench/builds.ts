import { execFileSync } from 'node:child_process'
import { existsSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { ROOT } from './paths.js'

/**
 * A built checkout whose own bench modules start its own service on its own store: the A/B run
 * (issue 31) drives the baseline through its code, never through this build's, so a store is only
 * ever opened by the schema that made it and the service starts as that build's bench starts it.
 */
export interface Build {
  root: string
  /** HEAD of the checkout, with "+ local changes" when its tracked files differ. */
  commit: string
  setup: typeof import('./setup.js')
  scenarios: typeof import('./scenarios.js')
  processes: typeof import('./processes.js')
  profiling: typeof import('./profiling.js')
}

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim()

function describe(root: string): string {
  const head = git(root, 'rev-parse', 'HEAD')
  const dirty = git(root, '--no-optional-locks', 'status', '--porcelain', '--untracked-files=no', '--', '.', ':(exclude)bench/results')
  return dirty === '' ? head : `${head} + local changes`
}

/** The bench modules of the checkout at `root`, which must have been built (dist/bench). */
export async function loadBuild(root: string): Promise<Build> {
  const module = async <T>(name: string) => {
    const file = join(root, 'dist/bench', name)
    if (!existsSync(file)) throw new Error(`${file} is missing: build that checkout first (npx tsc -p tsconfig.json)`)
    return (await import(pathToFileURL(file).href)) as T
  }
  return {
    root,
    commit: describe(root),
    setup: await module('setup.js'),
    scenarios: await module('scenarios.js'),
    processes: await module('processes.js'),
    profiling: await module('profiling.js')
  }
}

/** This checkout, through the same loader as the baseline so both are driven alike. */
export const thisBuild = () => loadBuild(ROOT)

/**
 * BENCH_BASELINE as a checkout: a directory is taken as built; a commit is looked for among the
 * repository's worktrees, and otherwise checked out under bench/.baselines/ and built there
 * (npm ci, tsc, the dashboard), which takes a few minutes the first time.
 */
export async function baselineBuild(value: string): Promise<Build> {
  if (existsSync(value) && statSync(value).isDirectory()) return loadBuild(resolve(value))
  const commit = git(ROOT, 'rev-parse', '--verify', `${value}^{commit}`)
  const worktrees = git(ROOT, 'worktree', 'list', '--porcelain').split('\n\n')
  const found = worktrees
    .map((block) => ({ path: /^worktree (.+)$/m.exec(block)?.[1], head: /^HEAD ([0-9a-f]+)$/m.exec(block)?.[1] }))
    .find((tree) => tree.head === commit && tree.path !== undefined && resolve(tree.path) !== resolve(ROOT))
  const root = found?.path ?? join(ROOT, 'bench/.baselines', commit.slice(0, 12))
  if (found === undefined && !existsSync(root)) {
    process.stderr.write(`bench: checking out ${commit.slice(0, 12)} into ${root} and building it\n`)
    git(ROOT, 'worktree', 'add', '--detach', root, commit)
  }
  if (!existsSync(join(root, 'dist/bench/setup.js'))) {
    const run = (command: string, ...args: string[]) => execFileSync(command, args, { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] })
    if (!existsSync(join(root, 'node_modules'))) run('npm', 'ci')
    run('npx', 'tsc', '-p', 'tsconfig.json')
    if (existsSync(join(root, 'dashboard/build.mjs'))) run(process.execPath, 'dashboard/build.mjs')
  }
  return loadBuild(root)
}
