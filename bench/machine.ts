import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { cpus, release, totalmem, type as osType } from 'node:os'
import { ROOT } from './paths.js'

/** The facts a reader needs to compare two result files. */
export function machineFacts(): string[] {
  const cores = cpus()
  return [
    `CPU: ${cores[0]?.model.trim() ?? 'unknown'} × ${cores.length}`,
    `Memory: ${(totalmem() / 1024 ** 3).toFixed(1)} GiB`,
    `Node: ${process.version}`,
    `OS: ${osRelease()} (${osType()} ${release()})`,
    `Commit: ${gitCommit()}`
  ]
}

function osRelease(): string {
  try {
    return /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(readFileSync('/etc/os-release', 'utf8'))?.[1] ?? 'unknown'
  } catch {
    return 'unknown'
  }
}

/** HEAD, read only (status without optional locks never rewrites the index); "+ local changes" when the tree differs. */
function gitCommit(): string {
  try {
    const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim()
    const dirty = execFileSync('git', ['--no-optional-locks', 'status', '--porcelain', '--untracked-files=no'], { cwd: ROOT, encoding: 'utf8' }).trim()
    return dirty === '' ? head : `${head} + local changes`
  } catch {
    return 'unknown (not a git work tree)'
  }
}
