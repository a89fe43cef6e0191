import { scryptSync } from 'node:crypto'
import { setPriority } from 'node:os'
import { parentPort } from 'node:worker_threads'
import { HASHING_NICE, type ScryptJob, type ScryptOutcome } from './scrypt-threads.js'

// Linux keeps a nice value per thread, so this lowers this thread alone; elsewhere it would lower
// the whole process, event loop included, so the thread keeps the process's priority there.
if (process.platform === 'linux') setPriority(0, HASHING_NICE)

parentPort!.on('message', ({ password, salt, keyLength, options }: ScryptJob) => {
  let outcome: ScryptOutcome
  try {
    outcome = { key: scryptSync(password, salt, keyLength, options) }
  } catch (error) {
    outcome = { error: error instanceof Error ? error.message : String(error) }
  }
  parentPort!.postMessage(outcome)
})
