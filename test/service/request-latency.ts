import t from 'tap'
import { AggregatorRegistry, Histogram, Registry } from 'prom-client'
import { RequestLatency } from '../../src/infrastructure/request-latency.js'

const BOUNDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/** The same observations into RequestLatency and into prom-client's own Histogram, each in a registry of its own. */
function fedBoth(observations: [labels: { method: string; route: string; status_code: string }, seconds: number][]) {
  const ours = new Registry()
  const latency = new RequestLatency(BOUNDS, ours)
  const theirs = new Registry()
  const histogram = new Histogram({ name: latency.name, help: latency.help, labelNames: ['method', 'route', 'status_code'], buckets: BOUNDS, registers: [theirs] })
  const series = new Map<string, (seconds: number) => void>()
  for (const [labels, seconds] of observations) {
    const key = JSON.stringify(labels)
    if (!series.has(key)) series.set(key, latency.series(labels))
    series.get(key)!(seconds)
    histogram.labels(labels).observe(seconds)
  }
  return { ours, theirs, latency, histogram }
}

const verify = { method: 'GET', route: '/auth/verify', status_code: '200' }
const refused = { method: 'GET', route: '/auth/verify', status_code: '401' }
const events = { method: 'POST', route: '/v1/events', status_code: '200' }
const OBSERVATIONS: [typeof verify, number][] = [
  [verify, 0.0004],
  [verify, 0.001],
  [refused, 0.0011],
  [events, 0.3],
  [verify, 0.0025],
  [events, 12],
  [refused, 0.049],
  [verify, 7.5]
]

t.test('request latency reads as prom-client’s Histogram of the same requests: the exposition, the JSON, the merge of workers', async (t) => {
  const { ours, theirs } = fedBoth(OBSERVATIONS)
  t.equal(await ours.metrics(), await theirs.metrics(), 'the same lines, bucket bounds at the edges included')
  // prom-client's samples carry an exemplar field (null or undefined: it keeps none here); the rest is alike.
  const withoutExemplars = (metrics: Awaited<ReturnType<Registry['getMetricsAsJSON']>>) =>
    metrics.map((metric) => ({ ...metric, values: metric.values.map((value) => ({ ...value, exemplar: undefined })) }))
  t.strictSame(withoutExemplars(await ours.getMetricsAsJSON()), withoutExemplars(await theirs.getMetricsAsJSON()), 'the same JSON, which workers hand the primary')
  const other = fedBoth(OBSERVATIONS.slice(2))
  const ourMerge = AggregatorRegistry.aggregate([await ours.getMetricsAsJSON(), await other.ours.getMetricsAsJSON()])
  const theirMerge = AggregatorRegistry.aggregate([await theirs.getMetricsAsJSON(), await other.theirs.getMetricsAsJSON()])
  t.equal(await ourMerge.metrics(), await theirMerge.metrics(), 'summed across workers alike')
})

t.test('a reset zeroes every series: it reads as prom-client’s Histogram zeroed for those labels', async (t) => {
  const { ours, theirs, latency, histogram } = fedBoth(OBSERVATIONS)
  latency.reset()
  histogram.reset()
  for (const [labels] of OBSERVATIONS) histogram.zero(labels)
  t.equal(await ours.metrics(), await theirs.metrics())
})
