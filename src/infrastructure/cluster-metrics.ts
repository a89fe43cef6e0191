import cluster, { type Worker } from 'node:cluster'
import { AggregatorRegistry, type Registry } from 'prom-client'
import { serviceUnavailable } from '../app-error.js'

// With WORKERS > 1 the primary merges every worker's metrics: one worker's own would read as a counter reset at each switch of worker.

const METRICS_REQUEST = 'frb-tracer:metrics-request'
const METRICS_ANSWER = 'frb-tracer:metrics'
/** How long a worker waits for the primary; the primary itself gives each worker prom-client's 5 s. */
const ANSWER_WITHIN_MS = 10_000

interface Request {
  kind: typeof METRICS_REQUEST
  id: number
}
interface Answer {
  kind: typeof METRICS_ANSWER
  id: number
  text?: string
  error?: string
}

const isRequest = (message: unknown): message is Request => (message as { kind?: unknown } | null)?.kind === METRICS_REQUEST
const isAnswer = (message: unknown): message is Answer => (message as { kind?: unknown } | null)?.kind === METRICS_ANSWER

/** In the primary: answers each worker's request with the metrics of every worker, merged. */
export function serveClusterMetrics(): void {
  const aggregator = new AggregatorRegistry()
  cluster.on('message', (worker: Worker, message: unknown) => {
    if (!isRequest(message)) return
    // A worker that died meanwhile has nobody waiting.
    const answer = (fields: Pick<Answer, 'text' | 'error'>) => worker.isConnected() && worker.send({ kind: METRICS_ANSWER, id: message.id, ...fields })
    aggregator.clusterMetrics().then(
      (text) => answer({ text }),
      (error: Error) => answer({ error: error.message })
    )
  })
}

/** In a worker: hands `registry` to the primary when asked, and returns the scrape through the primary (503 when it does not answer). */
export function clusterScrape(registry: Registry): () => Promise<string> {
  AggregatorRegistry.setRegistries([registry])
  // Its constructor is what starts answering the primary's collection.
  void new AggregatorRegistry()
  let next = 0
  const waiting = new Map<number, (answer: Pick<Answer, 'text' | 'error'>) => void>()
  process.on('message', (message: unknown) => {
    if (isAnswer(message)) waiting.get(message.id)?.(message)
  })
  return () =>
    new Promise<string>((resolve, reject) => {
      const id = next++
      const settle = ({ text, error }: Pick<Answer, 'text' | 'error'>) => {
        clearTimeout(timer)
        waiting.delete(id)
        if (text !== undefined) resolve(text)
        else reject(serviceUnavailable(`The metrics of every worker could not be collected (${error ?? 'no answer'}); try again shortly.`))
      }
      const timer = setTimeout(() => settle({ error: `the primary did not answer within ${ANSWER_WITHIN_MS / 1000} s` }), ANSWER_WITHIN_MS)
      waiting.set(id, settle)
      process.send!({ kind: METRICS_REQUEST, id } satisfies Request)
    })
}
