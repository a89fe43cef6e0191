/**
 * Started by owned-processes.ts, one per test process: reads `+<pid>` and `-<pid>` lines naming the
 * process groups the test has started and killed. When its input closes, the test process has
 * ended (its last teardown, a crash, or tap killing a file that timed out): it kills every group
 * still named, with SIGKILL, and exits.
 */
import { createInterface } from 'node:readline'

const groups = new Set<number>()
const lines = createInterface({ input: process.stdin })
lines.on('line', (line) => {
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
  process.exit(0)
})
