import cluster, { type Worker } from 'node:cluster'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { serveClusterMetrics } from '../../src/infrastructure/cluster-metrics.js'

/*
 * Issue 40, finding 5, in the fast tier: with WORKERS above 1 each worker's scrape is the metrics of
 * every worker, merged by the primary, not its own alone. Real cluster workers of this process;
 * the process tier (process/workers-metrics.test.ts) holds the service itself to it.
 */

const WORKER = fileURLToPath(new URL('./cluster-metrics-worker.js', import.meta.url))
/**
 * Compiled, a worker needs none of tap's import hooks (TypeScript, mocks, process info), which each
 * worker would otherwise load before its own code; the coverage of its code is still taken, by the
 * hook tap names in NODE_OPTIONS. Run from the sources, the TypeScript hook is what loads it.
 */
const execArgv = import.meta.url.endsWith('.ts') ? process.execArgv : []

interface Scraped {
  kind: 'scraped'
  text?: string
  error?: string
}

/** The next message of `kind` from `worker`: the primary also hears prom-client's own messages. */
function nextMessage<T extends { kind: string }>(worker: Worker, kind: string): Promise<T> {
  return new Promise((resolve) => {
    const listener = (message: { kind?: unknown }) => {
      if (message?.kind !== kind) return
      worker.off('message', listener)
      resolve(message as T)
    }
    worker.on('message', listener)
  })
}

t.test('each worker scrapes the counters of every worker, summed by the primary', async (t) => {
  cluster.setupPrimary({ exec: WORKER, execArgv, silent: false })
  serveClusterMetrics()
  const workers: Worker[] = []
  t.teardown(() => {
    for (const worker of workers) worker.process.kill('SIGKILL')
  })
  for (const requests of [3, 4]) {
    const worker = cluster.fork({ TEST_REQUESTS: String(requests) })
    workers.push(worker)
    await nextMessage(worker, 'ready')
  }
  for (const worker of workers) {
    const answered = nextMessage<Scraped>(worker, 'scraped')
    worker.send('scrape')
    const answer = await answered
    t.equal(answer.error, undefined)
    t.match(answer.text, /^test_requests_total 7$/m, `worker ${worker.id} sees both workers' requests, 3 + 4`)
  }
})
