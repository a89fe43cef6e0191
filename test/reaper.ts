/**
 * Started by owned-processes.ts, one per test process: reads `+<pid>` and `-<pid>` lines naming the
 * process groups the test has started and killed, and `run <argv>` and `done <argv>` lines naming a
 * command (a JSON array) that removes what the test made outside them, and its removal by the
 * test. When its input closes, the test process has ended (its last teardown, a crash, or tap
 * killing a file that timed out): it kills every group still named, with SIGKILL, runs every
 * command still due (the last named first), and exits.
 */
import { spawnSync } from 'node:child_process'
import { createInterface } from 'node:readline'

const groups = new Set<number>()
const commands: string[] = []
const lines = createInterface({ input: process.stdin })
lines.on('line', (line) => {
  if (line.startsWith('run ')) return void commands.push(line.slice(4))
  if (line.startsWith('done ')) {
    const at = commands.lastIndexOf(line.slice(5))
    if (at >= 0) commands.splice(at, 1)
    return
  }
  const pid = Number(line.slice(1))
  if (!Number.isSafeInteger(pid) || pid <= 1) return
  if (line.startsWith('+')) groups.add(pid)
  else groups.delete(pid)
})
lines.on('close', () => {
  for (const group of groups) {
    try {
      process.kill(-group, 'SIGKILL')
    } catch {
      // Gone already.
    }
  }
  for (const command of commands.reverse()) {
    const [file, ...args] = JSON.parse(command) as string[]
    spawnSync(file!, args, { stdio: 'ignore', timeout: 60_000 })
  }
  process.exit(0)
})
