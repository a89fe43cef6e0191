import { readdirSync, readFileSync, readlinkSync } from 'node:fs'

/**
 * `pid` and all its descendants, from /proc (Linux): a service with WORKERS > 1 is a primary and
 * its workers. A process that exits meanwhile is left out.
 */
export function processTree(pid: number): number[] {
  let tasks: string[]
  try {
    tasks = readdirSync(`/proc/${pid}/task`)
  } catch {
    return []
  }
  const children = tasks.flatMap((task) => {
    try {
      return readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number)
    } catch {
      return []
    }
  })
  return [pid, ...children.flatMap(processTree)]
}

/** Linux reports CPU times in USER_HZ ticks, 100 a second on every architecture Node runs on. */
const TICKS_PER_SECOND = 100

/** CPU time (user and system) these processes have used so far, in seconds; one that has exited counts nothing. */
export function cpuSeconds(pids: readonly number[]): number {
  let ticks = 0
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      // The command name may hold spaces; the fields after its closing parenthesis are fixed.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      ticks += Number(fields[11]) + Number(fields[12])
    } catch {
      // Exited: its time is gone with it.
    }
  }
  return ticks / TICKS_PER_SECOND
}

/** The inode of the socket listening on `port` (IPv4), from /proc/net/tcp; undefined while none does. */
function listeningSocketInode(port: number): string | undefined {
  const localPort = ':' + port.toString(16).toUpperCase().padStart(4, '0')
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    // sl, local_address, rem_address, st (0A: LISTEN), tx:rx, tr:when, retrnsmt, uid, timeout, inode
    const [, local, , state, , , , , , inode] = line.trim().split(/\s+/)
    if (local?.endsWith(localPort) === true && state === '0A') return inode
  }
  return undefined
}

/**
 * How many children of `primaryPid` hold the socket listening on `port`. Workers accept on the
 * primary's socket themselves, and each is given it when it listens: this counts the workers that
 * listen, which the service logs only at LOG_LEVEL=info.
 */
export function listeningChildren(primaryPid: number, port: number): number {
  const inode = listeningSocketInode(port)
  if (inode === undefined) return 0
  const socket = `socket:[${inode}]`
  return processTree(primaryPid)
    .slice(1)
    .filter((pid) => {
      try {
        return readdirSync(`/proc/${pid}/fd`).some((fd) => readlinkOrEmpty(`/proc/${pid}/fd/${fd}`) === socket)
      } catch {
        return false
      }
    }).length
}

function readlinkOrEmpty(path: string): string {
  try {
    return readlinkSync(path)
  } catch {
    return ''
  }
}
