import { once } from 'node:events'
import { existsSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { runCli } from './processes.js'

/* A start that cannot serve stops with status 1 and one line on standard error, single or with workers, and writes nothing first. */

const WORKERS = ['1', '2']

async function occupiedPort(t: Test): Promise<number> {
  const blocker = createServer().listen(0, '127.0.0.1')
  await once(blocker, 'listening')
  t.teardown(() => void blocker.close())
  return (blocker.address() as { port: number }).port
}

t.test('a start that cannot listen writes nothing: no store, no demo data, no generated secret, not even the folder', async (t) => {
  const port = await occupiedPort(t)
  for (const workers of WORKERS) {
    const folder = join(t.testdir(), `new-${workers}`)
    const result = await runCli(['serve'], { TRACER_DB: join(folder, 'tracer.sqlite'), PORT: String(port), WORKERS: workers })
    t.equal(result.status, 1, `WORKERS=${workers}`)
    t.equal(result.stderr, `tracer: cannot listen on 127.0.0.1:${port}: another process listens on that port already (EADDRINUSE)\n`)
    t.equal(result.stdout, '', 'no admin created, nothing seeded, no worker started')
    t.equal(existsSync(folder), false, 'nothing written')
  }
})
