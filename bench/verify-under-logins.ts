import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runLoad, type LoadResult } from './load.js'
import { startService, stopChildrenOnSignals } from './processes.js'
import { ensureWriter, logIn } from './tokens.js'

/**
 * `node dist/bench/verify-under-logins.js [seconds] [rounds] [--shared]` (issue 41): GET /auth/verify's rate
 * with and without a flood of logins beside it. A fresh `tracer serve` on a temporary store is
 * pinned to core 1 (its event loop and its hashing thread share it), this process and its load to
 * core 0. Each round loads verify alone (50 connections) for `seconds`, then verify again while 8
 * more connections post logins as fast as they are answered; the two rates are compared round by
 * round, as the machine's own drift moves both alike. The target: verify keeps at least 90% of its
 * rate. Prints one line a round and the median ratio.
 */

const [secondsText = '8', roundsText = '5'] = process.argv.slice(2).filter((arg) => !arg.startsWith('--'))
const SECONDS = Number(secondsText)
const ROUNDS = Number(roundsText)
const VERIFY_CONNECTIONS = 50
const LOGIN_CONNECTIONS = 8

/** `--shared`: nothing pinned, the service's threads and the load share both cores as the scheduler likes. */
const PINNED = !process.argv.includes('--shared')
const pin = (core: number, pid: number) => PINNED && execFileSync('taskset', ['-a', '-cp', String(core), String(pid)], { stdio: 'ignore' })

async function main(): Promise<void> {
  stopChildrenOnSignals()
  const dir = mkdtempSync(join(tmpdir(), 'verify-under-logins-'))
  const db = join(dir, 'tracer.sqlite')
  const user = await ensureWriter(db)
  const service = await startService({ db, jwtSecret: randomBytes(48).toString('base64url') })
  try {
    pin(1, service.pid)
    pin(0, process.pid)
    const token = await logIn(service.url, user)
    const verify = (seconds: number): Promise<LoadResult> =>
      runLoad({
        url: service.url,
        pid: service.pid,
        connections: VERIFY_CONNECTIONS,
        seconds,
        requests: [{ method: 'GET', path: '/auth/verify', headers: { authorization: `Bearer ${token}` } }]
      })
    const logins = (seconds: number): Promise<LoadResult> =>
      runLoad({
        url: service.url,
        pid: service.pid,
        connections: LOGIN_CONNECTIONS,
        seconds,
        requests: [{ method: 'POST', path: '/auth', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: user.name, password: user.password }) }]
      })
    await verify(2)
    const ratios: number[] = []
    for (let round = 1; round <= ROUNDS; round++) {
      const alone = await verify(SECONDS)
      const [beside, flood] = await Promise.all([verify(SECONDS), logins(SECONDS)])
      const ratio = beside.rps / alone.rps
      ratios.push(ratio)
      const ok = (result: LoadResult) => result.statusCounts['200'] ?? 0
      process.stdout.write(
        `round ${round}: verify ${alone.rps.toFixed(0)} req/s alone, ${beside.rps.toFixed(0)} beside ${flood.rps.toFixed(1)} logins/s ` +
          `(${ok(flood)} answered 200 of ${flood.responses}): ${(ratio * 100).toFixed(1)}%; peak RSS ${flood.peakRssMb.toFixed(0)} MB\n`
      )
    }
    ratios.sort((a, b) => a - b)
    process.stdout.write(`median ${(ratios[Math.floor(ratios.length / 2)]! * 100).toFixed(1)}% (target at least 90%), lowest ${(ratios[0]! * 100).toFixed(1)}%\n`)
  } finally {
    await service.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()
