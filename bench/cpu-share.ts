import { readFileSync } from 'node:fs'

/** Clock ticks (USER_HZ) of the whole machine, busy and in total, from the first line of /proc/stat. */
function machineTicks(): { busy: number; steal: number; total: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number)
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = fields
  return { busy: user + nice + system + irq + softirq + steal, steal, total: user + nice + system + idle + iowait + irq + softirq + steal }
}

/** Ticks used by this process and by every child it has reaped (utime, stime, cutime, cstime). */
function ownTicks(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8')
  // The command name may hold spaces; the fields after its closing parenthesis are fixed.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number)
  return fields[11]! + fields[12]! + fields[13]! + fields[14]!
}

export interface CpuShare {
  /** Percent of the machine's CPU time used by processes other than the bench and its children. */
  othersPercent: number
  /** Percent of the machine's CPU time the hypervisor gave to other guests (steal). */
  stealPercent: number
}

/**
 * Starts accounting for the CPU time of other processes: another engineer's test suite on the same
 * 2 cores slows every scenario, and the report should say so. Call the returned function after
 * every child has exited (their time is counted once they are reaped). Kernel time spent on the
 * bench's own loopback traffic can land outside any process, so small percentages are noise.
 */
export function startCpuAccounting(): () => CpuShare {
  const machineBefore = machineTicks()
  const ownBefore = ownTicks()
  return () => {
    const machine = machineTicks()
    const total = machine.total - machineBefore.total
    const others = machine.busy - machineBefore.busy - (ownTicks() - ownBefore)
    return {
      othersPercent: total > 0 ? Math.max(0, (100 * others) / total) : 0,
      stealPercent: total > 0 ? (100 * (machine.steal - machineBefore.steal)) / total : 0
    }
  }
}

/** Above this share of the CPU used by other processes, the reports warn that every figure is lower and noisier. */
export const NOISY_PERCENT = 10
