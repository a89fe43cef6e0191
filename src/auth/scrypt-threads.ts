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
 * The nice value of a hashing thread (Linux): CFS weighs it 110 against the event loop's 1024, so under
 * a flood of logins verify keeps about nine tenths of its rate. At 19 (weight 15) a login beside two
 * busy programs took ten seconds and more.
 */
export const HASHING_NICE = 10

/**
 * Threads that hash one password at a time each at HASHING_NICE, at most `size` (a core fewer than the
 * process may use), the other hashes waiting in order: libuv's pool hashed four at once at the event
 * loop's priority, and a flood of logins took the CPU the token checks need. A thread idle for `idleMs` ends, freeing its memory.
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
