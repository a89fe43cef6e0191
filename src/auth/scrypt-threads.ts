import type { ScryptOptions } from 'node:crypto'
import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import pLimit from 'p-limit'

export interface ScryptJob {
  password: string
  salt: Uint8Array
  keyLength: number
  options: ScryptOptions
}

/** What a thread answers: the key, or why scrypt refused the job. */
export type ScryptOutcome = { key: Uint8Array } | { error: string }

const WORKER = new URL('./scrypt-worker.js', import.meta.url)

/**
 * The nice value of a hashing thread (Linux). CFS weighs it 110 against the event loop's 1024: on a
 * core they share, a hash takes about a tenth of it, so verify keeps about nine tenths of its rate
 * under a flood of logins. At 19 (weight 15) a hash got 1.5% of a core beside two busy programs and
 * a login took ten seconds and more; at 10 it still progresses beside them.
 */
export const HASHING_NICE = 10

/**
 * Where passwords are hashed: threads of their own, at most `size` (one core fewer than the
 * process may use, at least one), each hashing one password at a time at a low CPU priority
 * (HASHING_NICE), the other hashes waiting their turn in order. libuv's pool hashed four at once,
 * each holding its memory, at the event loop's priority: a flood of logins took the CPU the token
 * checks need. At a low priority a hash gets little of a core the event loop needs, all of it on
 * an idle service. A thread that has hashed nothing for `idleMs` ends, and its memory goes with it.
 */
export class ScryptThreads {
  readonly #limit: ReturnType<typeof pLimit>
  readonly #idle: Worker[] = []
  readonly #endings = new Map<Worker, NodeJS.Timeout>()
  readonly #hashing = new Map<Worker, { resolve: (key: Buffer) => void; reject: (error: Error) => void }>()

  constructor(
    readonly size = Math.max(1, availableParallelism() - 1),
    private readonly idleMs = 10_000
  ) {
    this.#limit = pLimit(size)
  }

  derive(job: ScryptJob): Promise<Buffer> {
    // Within the limit a thread is always idle or may be started: at most `size` jobs run at once.
    return this.#limit(
      () =>
        new Promise<Buffer>((resolve, reject) => {
          const worker = this.#idle.pop() ?? this.#start()
          clearTimeout(this.#endings.get(worker))
          this.#endings.delete(worker)
          this.#hashing.set(worker, { resolve, reject })
          // While it hashes the thread keeps the process alive (a command awaits its hash); idle, it does not.
          worker.ref()
          worker.postMessage(job)
        })
    )
  }

  #start(): Worker {
    const worker = new Worker(WORKER)
    worker.on('message', (outcome: ScryptOutcome) => {
      const job = this.#hashing.get(worker)!
      this.#hashing.delete(worker)
      this.#rest(worker)
      if ('key' in outcome) job.resolve(Buffer.from(outcome.key))
      else job.reject(new Error(outcome.error))
    })
    // A thread that fails leaves the pool, refusing the hash it was making.
    worker.on('error', (error) => {
      this.#hashing.get(worker)?.reject(error)
      this.#hashing.delete(worker)
      this.#forget(worker)
    })
    return worker
  }

  #rest(worker: Worker) {
    worker.unref()
    this.#idle.push(worker)
    const ending = setTimeout(() => {
      this.#forget(worker)
      void worker.terminate()
    }, this.idleMs)
    ending.unref()
    this.#endings.set(worker, ending)
  }

  #forget(worker: Worker) {
    const at = this.#idle.indexOf(worker)
    if (at !== -1) this.#idle.splice(at, 1)
    clearTimeout(this.#endings.get(worker))
    this.#endings.delete(worker)
  }
}
