import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client'
import type { Store } from '../store/port.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Prometheus registry of this app: request and store metrics, and the process's own. */
    metrics: Registry
  }
}

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/**
 * Request counts and latency by route and status, and store latency by operation. A registry per
 * app (not prom-client's global one), so apps built side by side in tests keep their own numbers.
 */
async function metrics(fastify: FastifyInstance) {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  const labelNames = ['method', 'route', 'status_code'] as const
  const requests = new Counter({ name: 'http_requests_total', help: 'HTTP requests answered.', labelNames, registers: [registry] })
  const latency = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from the request to the end of the response.',
    labelNames,
    buckets: LATENCY_BUCKETS,
    registers: [registry]
  })
  fastify.decorate('metrics', registry)

  fastify.addHook('onResponse', async (request, reply) => {
    // The route's template keeps the label set small; unmatched URLs share one label.
    const labels = {
      method: request.method,
      route: request.routeOptions.url ?? '(unmatched)',
      status_code: String(reply.statusCode)
    }
    requests.inc(labels)
    latency.observe(labels, reply.elapsedTime / 1000)
  })
}

export default fp(metrics, { name: 'metrics', fastify: '5.x' })

/** The store, with the duration of every operation recorded by name and outcome. */
export function measuredStore(store: Store, registry: Registry): Store {
  const duration = new Histogram({
    name: 'store_operation_duration_seconds',
    help: 'Time the store took for an operation.',
    labelNames: ['operation', 'outcome'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry]
  })
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver)
      if (typeof value !== 'function' || typeof property !== 'string') return value
      return (...args: unknown[]) => {
        const result = value.apply(target, args)
        if (!(result instanceof Promise)) return result
        const stop = duration.startTimer({ operation: property })
        return result.then(
          (resolved) => (stop({ outcome: 'ok' }), resolved),
          (error: unknown) => {
            stop({ outcome: 'error' })
            throw error
          }
        )
      }
    }
  })
}
