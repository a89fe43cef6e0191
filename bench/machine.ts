import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { cpus, release, totalmem, type as osType } from 'node:os'
import { ROOT } from './paths.js'

/** The facts a reader needs to compare two result files. */
export interface Machine {
  cpu: string
  cores: number
  memoryGiB: number
  node: string
  os: string
  commit: string
}

export function machine(): Machine {
  const cores = cpus()
  return {
    cpu: cores[0]?.model.trim() ?? 'unknown',
    cores: cores.length,
    memoryGiB: totalmem() / 1024 ** 3,
    node: process.version,
    os: `${osRelease()} (${osType()} ${release()})`,
    commit: gitCommit()
  }
}

export function machineFacts(facts: Machine = machine()): string[] {
  return [
    `CPU: ${facts.cpu} × ${facts.cores}`,
    `Memory: ${facts.memoryGiB.toFixed(1)} GiB`,
    `Node: ${facts.node}`,
    `OS: ${facts.os}`,
    `Commit: ${facts.commit}`
  ]
}

function osRelease(): string {
  try {
    return /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(readFileSync('/etc/os-release', 'utf8'))?.[1] ?? 'unknown'
  } catch {
    return 'unknown'
  }
}

/** What the bench writes itself: a tree that differs only there runs the same code. */
const BENCH_OUTPUTS = [':(exclude)bench/results']

/** HEAD, read only (status without optional locks never rewrites the index); "+ local changes" when the tree differs. */
function gitCommit(): string {
  try {
    const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim()
    const dirty = execFileSync('git', ['--no-optional-locks', 'status', '--porcelain', '--untracked-files=no', '--', '.', ...BENCH_OUTPUTS], {
      cwd: ROOT,
      encoding: 'utf8'
    }).trim()
    return dirty === '' ? head : `${head} + local changes`
  } catch {
    return 'unknown (not a git work tree)'
  }
}
