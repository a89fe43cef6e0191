import cluster, { type Address, type Worker } from 'node:cluster'
import { pino, type Logger } from 'pino'
import { prepareStore } from '../bootstrap.js'
import type { HeldAddress } from '../start/listen-address.js'
import { storeFailure } from '../start/start-failures.js'
import type { Config } from '../config.js'
import type { ResolvedSecret } from '../secret.js'
import { openStore } from '../store/open.js'
import { serveClusterMetrics } from '../infrastructure/cluster-metrics.js'
import { CLOSE_GRACE_MS, DRAIN_MESSAGE, FATAL_HEARD, isFatalLine, STORE_UNUSABLE_EXIT_CODE } from './roles.js'

/** `serve` with WORKERS > 1: the start-up work that must happen once, then the primary of WORKERS servers on its port. */
export async function runPrimary(config: Config, { generatedFile }: ResolvedSecret, address: HeldAddress): Promise<void> {
  const log = pino({ level: config.LOG_LEVEL })
  if (config.TRACER_STORE === 'sqlite') await prepareSqliteStore(config)
  if (generatedFile !== undefined) log.warn(`JWT_SECRET is not set; using the generated secret in ${generatedFile}. Set JWT_SECRET in production.`)

  const pool = new WorkerPool(config.WORKERS, log)
  let closing = false
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (closing) {
        log.error({ signal }, 'second signal: killing the workers')
        return pool.kill()
      }
      closing = true
      log.info({ signal }, 'closing')
      pool.stop()
    })
  }
  // The workers listen through this process, so holding the socket on would fail their bind. Another
  // process could take the port until then: the workers then fail to listen and the service stops.
  await address.release()
  serveClusterMetrics()
  pool.start()
  void pool.finished.then((status) => process.exit(status))
}

/** What a single server does before it listens, done once so that the workers find it done. */
async function prepareSqliteStore(config: Config): Promise<void> {
  try {
    // The workers make output texts and a kept audit that are due while they serve: here they would hold their listening up.
    const store = await openStore(config, { whenMissing: 'create-for-demo', rebuild: 'left' })
    try {
      await prepareStore(store, config, (line) => void process.stdout.write(line + '\n'))
    } finally {
      await store.close()
    }
  } catch (error) {
    throw storeFailure(config, error)
  }
}

/** How long the workers may take to drain: their own grace, and a margin for their exit. */
export const DRAIN_BOUND_MS = CLOSE_GRACE_MS + 2_000

/** A worker that lived this long before it died was not crashing at start: it is restarted at once. */
const STABLE_AFTER_MS = 10_000

/** The wait before restarting a worker after `quickDeaths` short lives in a row (0, 1, 2 ... 16 s, then 30): a crash at start costs no core. */
const restartDelayMs = (quickDeaths: number) => (quickDeaths <= 1 ? 0 : Math.min(30_000, 1000 * 2 ** (quickDeaths - 2)))

/** One of the WORKERS places: its number stays when the worker in it is replaced. */
interface Slot {
  readonly number: number
  worker?: Worker
  startedAt: number
  listening: boolean
  /** Whether a worker in this slot ever listened: one that never did is a failed start-up. */
  served: boolean
  quickDeaths: number
  restart?: NodeJS.Timeout
}

/**
 * WORKERS servers forked from this process. One that dies is replaced, unless the pool stops, it
 * never started, or it could not use the store. `finished`: the service's exit status, once all exited.
 */
class WorkerPool {
  readonly finished: Promise<number>
  private readonly slots: Slot[]
  private resolveFinished!: (status: number) => void
  private starting = true
  private stopping = false
  private status = 0
  private deadline?: NodeJS.Timeout
  /** What workers said before they exited (roles.ts exitSaying), each printed once. */
  private readonly said = new Set<string>()

  constructor(
    count: number,
    private readonly log: Logger
  ) {
    this.slots = Array.from({ length: count }, (_, i) => ({ number: i + 1, startedAt: 0, listening: false, served: false, quickDeaths: 0 }))
    this.finished = new Promise((resolve) => (this.resolveFinished = resolve))
  }

  start(): void {
    // Every worker accepts on the shared socket itself: under round robin a connection handed to a
    // worker that has just died is never answered (the first client after a SIGKILL timed out).
    cluster.schedulingPolicy = cluster.SCHED_NONE
    this.log.info({ workers: this.slots.length }, 'starting workers')
    for (const slot of this.slots) this.fork(slot)
  }

  /** Has every worker drain as on SIGTERM, killing those left after DRAIN_BOUND_MS; the service ends with `status`, or 1 if a worker did not end cleanly. */
  stop(status = 0): void {
    this.status = Math.max(this.status, status)
    if (this.stopping) return
    this.stopping = true
    for (const slot of this.slots) {
      clearTimeout(slot.restart)
      const worker = slot.worker
      if (worker === undefined) continue
      // One that does not listen yet has nothing to drain, and may not listen for the message yet.
      if (slot.listening && worker.isConnected()) worker.send(DRAIN_MESSAGE)
      else worker.process.kill('SIGTERM')
    }
    this.deadline = setTimeout(() => {
      this.log.error({ workers: this.running().length }, `workers still running after ${DRAIN_BOUND_MS} ms: killing them`)
      this.kill()
    }, DRAIN_BOUND_MS)
    this.finishIfDone()
  }

  /** Kills every worker at once (a second signal): the service then ends with status 1. */
  kill(): void {
    this.stop(1)
    for (const worker of this.running()) worker.process.kill('SIGKILL')
  }

  private running(): Worker[] {
    return this.slots.flatMap((slot) => (slot.worker === undefined ? [] : [slot.worker]))
  }

  private fork(slot: Slot): void {
    slot.restart = undefined
    const worker = cluster.fork()
    Object.assign(slot, { worker, startedAt: Date.now(), listening: false })
    const pid = worker.process.pid
    worker.on('listening', (address: Address) => {
      // Once per worker, though it listens once per address when HOST names several.
      if (slot.listening) return
      slot.listening = true
      slot.served = true
      this.log.info({ worker: slot.number, workerPid: pid, url: `http://${address.address}:${address.port}` }, 'worker listening')
      if (this.starting && this.slots.every((other) => other.listening)) {
        this.starting = false
        this.log.info({ workers: this.slots.length }, 'every worker is listening')
      }
    })
    worker.on('message', (message: unknown) => {
      if (!isFatalLine(message)) return
      if (!this.said.has(message.text)) process.stderr.write(message.text)
      this.said.add(message.text)
      if (worker.isConnected()) worker.send(FATAL_HEARD)
    })
    // The channel to a worker that died mid-send: its exit, which follows, is what matters.
    worker.on('error', (err: Error) => this.log.warn({ worker: slot.number, workerPid: pid, err }, 'worker channel error'))
    worker.on('exit', (code: number | null, signal: NodeJS.Signals | null) => this.exited(slot, worker, code, signal))
  }

  private exited(slot: Slot, worker: Worker, code: number | null, signal: NodeJS.Signals | null): void {
    if (slot.worker !== worker) return
    slot.worker = undefined
    slot.listening = false
    const fields = { worker: slot.number, workerPid: worker.process.pid, code, signal }
    if (this.stopping) {
      if (code !== 0) this.status = 1
      this.log.info(fields, 'worker exited')
      return this.finishIfDone()
    }
    if (code === STORE_UNUSABLE_EXIT_CODE) {
      this.log.fatal(fields, 'worker exited: it cannot use the store, so the service stops')
      return this.stop(1)
    }
    if (this.starting && !slot.served) {
      this.log.fatal(fields, 'worker exited before it listened: the service cannot start')
      return this.stop(1)
    }
    // Short lives in a row, counting this one: reset by a worker that lived STABLE_AFTER_MS.
    slot.quickDeaths = Date.now() - slot.startedAt < STABLE_AFTER_MS ? slot.quickDeaths + 1 : 0
    const restartInMs = restartDelayMs(slot.quickDeaths)
    this.log.error({ ...fields, restartInMs }, 'worker exited unexpectedly; restarting it')
    slot.restart = setTimeout(() => this.fork(slot), restartInMs)
  }

  private finishIfDone(): void {
    if (!this.stopping || this.running().length > 0) return
    clearTimeout(this.deadline)
    this.resolveFinished(this.status)
  }
}
