import cluster from 'node:cluster'
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import fp from 'fastify-plugin'
import { collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'
import { clusterScrape } from './cluster-metrics.js'
import { RequestLatency } from './request-latency.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** A registry per app (not prom-client's global one), so apps built side by side in tests keep their own numbers. */
    metrics: Registry
    /** The exposition GET /metrics answers: this registry's, or with WORKERS > 1 every worker's merged (cluster-metrics.ts). */
    scrapeMetrics: () => Promise<string>
  }
}

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/** Request latency by route and status, store latency by operation, and the process's own metrics. */
async function metrics(fastify: FastifyInstance) {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  startTimeOfYoungest(registry)
  const latency = new RequestLatency(LATENCY_BUCKETS, registry)
  fastify.decorate('metrics', registry)
  fastify.decorate('scrapeMetrics', cluster.isWorker ? clusterScrape(registry) : () => registry.metrics())

  // The series of each method and status is looked up once, by values the request holds (a key joined from them would be a new string each time).
  type Record = (seconds: number) => void
  const recorder = (route: string) => {
    const series = new Map<string, Map<number, Record>>()
    return (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
      const { method } = request
      const { statusCode } = reply
      let byStatus = series.get(method)
      if (byStatus === undefined) series.set(method, (byStatus = new Map<number, Record>()))
      let record = byStatus.get(statusCode)
      if (record === undefined) byStatus.set(statusCode, (record = latency.series({ method, route, status_code: String(statusCode) })))
      record(reply.elapsedTime / 1000)
      done()
    }
  }
  // A hook per route that knows its template: request.routeOptions would build an object per request.
  fastify.addHook('onRoute', (route) => {
    route.onResponse = [...[route.onResponse ?? []].flat(), recorder(route.url)]
  })
  // Unmatched URLs share one label; their answer comes from the not-found handler, which has no route.
  const unmatched = recorder('(unmatched)')
  fastify.addHook('onResponse', (request, reply, done) => (request.is404 ? unmatched(request, reply, done) : done()))

  const storeLatency = new Histogram({
    name: 'store_operation_duration_seconds',
    help: 'Time the store took for an operation.',
    labelNames: ['operation', 'outcome'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry]
  })
  // The series of each operation and outcome is looked up once, as the requests' are.
  const storeSeries = new Map<string, Histogram.Internal<'operation' | 'outcome'>>()
  fastify.store.observe((operation, seconds, ok) => {
    const key = ok ? operation : `${operation} error`
    let series = storeSeries.get(key)
    if (series === undefined) storeSeries.set(key, (series = storeLatency.labels({ operation, outcome: ok ? 'ok' : 'error' })))
    series.observe(seconds)
  })
}

// prom-client's merge drops process_start_time_seconds, which TracerVerifierStalled reads: the youngest start, so it waits for every worker.
function startTimeOfYoungest(registry: Registry): void {
  const name = 'process_start_time_seconds'
  registry.removeSingleMetric(name)
  const gauge = new Gauge({ name, help: 'Start time of the process since unix epoch in seconds.', aggregator: 'max', registers: [registry] })
  gauge.set(Math.round(Date.now() / 1000 - process.uptime()))
}

export default fp(metrics, { name: 'metrics', fastify: '5.x', decorators: { fastify: ['store'] } })
