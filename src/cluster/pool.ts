import cluster, { type Address, type Worker } from 'node:cluster'
import type { Logger } from 'pino'
import { quickDeathsAfter, restartDelayMs } from './restarts.js'
import { CLOSE_GRACE_MS, DRAIN_MESSAGE, FATAL_HEARD, isFatalLine, STORE_UNUSABLE_EXIT_CODE } from './roles.js'

/** How long the workers may take to drain: their own grace, and a margin for their exit. */
export const DRAIN_BOUND_MS = CLOSE_GRACE_MS + 2_000

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
 * WORKERS server processes forked from this one, sharing its port. A worker that dies is replaced
 * (see restarts.ts), except while the pool stops, when it is the one that could not start the
 * service, or when it could not use the store. `finished` resolves with the exit status the whole
 * service should end with once every worker has exited.
 */
export class WorkerPool {
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
    // Every worker accepts on the shared socket itself. With the default round robin the primary
    // accepts and hands each connection over, and one handed to a worker that has just died is
    // never answered: the first new client after a SIGKILL waited for its own timeout.
    cluster.schedulingPolicy = cluster.SCHED_NONE
    this.log.info({ workers: this.slots.length }, 'starting workers')
    for (const slot of this.slots) this.fork(slot)
  }

  /**
   * Asks every worker to drain as a single server does on SIGTERM, and gives them DRAIN_BOUND_MS;
   * those left then are killed. The service ends with `status`, or 1 when a worker did not end cleanly.
   */
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
    slot.quickDeaths = quickDeathsAfter(slot.quickDeaths, Date.now() - slot.startedAt)
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
