import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process'
import { once } from 'node:events'
import type { Socket } from 'node:net'
import { fileURLToPath } from 'node:url'

/*
 * Processes a test starts, none of which may outlive it. Each runs as the leader of a process group
 * of its own, so that what it starts in turn (workers, a shell's children) is killed with it. A
 * group is killed with SIGKILL when the test tears it down, when this process exits, and, by a
 * reaper process that watches this one, when this process dies however it dies: tap ends a test
 * file that times out with SIGALRM and then SIGKILL, which run no 'exit' listener and no teardown.
 * What lives outside any process group (a container, a volume) is removed by a command the reaper
 * runs then, unless the test has removed it itself.
 */

const REAPER = fileURLToPath(new URL('./reaper.js', import.meta.url))

/** The groups started here and not yet killed, by their leader's pid. */
const groups = new Set<number>()
let reaper: ChildProcess | undefined

function tellReaper(line: string) {
  if (reaper === undefined) {
    // Its own group too: a signal meant for the test's group does not reach it before it has acted.
    reaper = spawn(process.execPath, [REAPER], { stdio: ['pipe', 'ignore', 'ignore'], detached: true, env: { PATH: process.env.PATH ?? '' } })
    reaper.unref()
    ;(reaper.stdin as Socket).unref()
    reaper.stdin!.on('error', () => {})
  }
  reaper.stdin!.write(`${line}\n`)
}

process.once('exit', () => {
  for (const group of groups) killGroupOf(group)
})

function killGroupOf(leader: number) {
  try {
    process.kill(-leader, 'SIGKILL')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error
  }
}

/** `spawn`, the child leading a process group of its own that is killed at the latest when this process ends. */
export function spawnOwned(command: string, args: string[], options: SpawnOptions): ChildProcess {
  const child = spawn(command, args, { ...options, detached: true })
  if (child.pid !== undefined) {
    groups.add(child.pid)
    tellReaper(`+${child.pid}`)
  }
  return child
}

/** Kills the child's whole group with SIGKILL (its leader may have exited, the members not). */
export function killGroup(child: ChildProcess) {
  const leader = child.pid
  if (leader === undefined || !groups.has(leader)) return
  killGroupOf(leader)
  groups.delete(leader)
  tellReaper(`-${leader}`)
}

/**
 * Has the reaper run `command` (a program and its arguments) once this process has ended, however
 * it ends, unless the function returned is called first: for what a test creates that no process
 * group holds, such as a container. The reaper runs the commands still due last first.
 */
export function cleanUpAtEnd(command: string[]): () => void {
  const line = JSON.stringify(command)
  tellReaper(`run ${line}`)
  return () => tellReaper(`done ${line}`)
}

/** How long a process may take to end on its signal (the service drains for up to 10 s) before its group is killed. */
const STOP_GRACE_MS = 15_000

/**
 * Sends `signal` and resolves once the child has exited; kills its group if it has not within the
 * grace period, so a hung process cannot hold a teardown until the file's timeout.
 */
export async function stop(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM') {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = once(child, 'exit')
  child.kill(signal)
  const timer = setTimeout(() => killGroup(child), STOP_GRACE_MS)
  try {
    await exited
  } finally {
    clearTimeout(timer)
  }
}

/** What a teardown does: stops the child as `stop` does, then kills what is left of its group. */
export async function end(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM') {
  await stop(child, signal)
  killGroup(child)
}
