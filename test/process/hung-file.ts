/**
 * Not a test of the suite: a test file that starts a service with two workers and another server,
 * then hangs until tap times it out, as a file stuck on a bug would. timed-out-file.test.ts runs it
 * under a tap of its own and then looks for what it started. The pids go to the file PIDS_FILE names.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import tap from 'tap'
import { startServer, startWorkers } from './processes.js'

tap.test('starts processes, then never ends', async (t) => {
  const workers = await startWorkers(t, { TRACER_DB: join(t.testdir(), 'workers.sqlite'), WORKERS: '2' })
  const single = await startServer(t, { TRACER_DB: join(t.testdir(), 'single.sqlite') })
  writeFileSync(process.env.PIDS_FILE!, JSON.stringify([workers.child.pid, ...workers.pids, single.child.pid]))
  // The file's timeout, from now: the runner ends this process as it ends any file that runs too long.
  tap.setTimeout(500)
  await new Promise(() => {})
})
