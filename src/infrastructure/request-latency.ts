import type { Metric, Registry } from 'prom-client'

type Labels = Record<'method' | 'route' | 'status_code', string>

/** A line of the exposition, as prom-client's metrics give them to its registry. */
type Sample = { metricName: string; labels: Record<string, string | number>; value: number }

interface Series {
  labels: Labels
  /** Per bucket, the observations above the bucket before it, up to its bound; the last past every bound. */
  counts: number[]
  sum: number
  count: number
}

// A prom-client Histogram recorded through a series found once: `labels(...).observe` builds their key each call, GET /auth/verify's main cost (issue 41).
export class RequestLatency {
  readonly name = 'http_request_duration_seconds'
  readonly help = 'Time from the request to the end of the response.'
  readonly type = 'histogram'
  readonly aggregator = 'sum'
  readonly #series: Series[] = []

  constructor(
    private readonly bounds: readonly number[],
    registry: Registry
  ) {
    // The registry asks a metric for its name, get() and reset() only; this one is not a prom-client class.
    registry.registerMetric(this as unknown as Metric)
  }

  series(labels: Labels): (seconds: number) => void {
    const series: Series = { labels, counts: new Array<number>(this.bounds.length + 1).fill(0), sum: 0, count: 0 }
    this.#series.push(series)
    const { bounds } = this
    return (seconds) => {
      let bucket = 0
      while (bucket < bounds.length && seconds > bounds[bucket]!) bucket += 1
      series.counts[bucket]! += 1
      series.sum += seconds
      series.count += 1
    }
  }

  get(): Promise<{ name: string; help: string; type: 'histogram'; values: Sample[]; aggregator: 'sum' }> {
    const values: Sample[] = []
    for (const { labels, counts, sum, count } of this.#series) {
      let below = 0
      this.bounds.forEach((le, bucket) => {
        below += counts[bucket]!
        values.push({ metricName: `${this.name}_bucket`, labels: { le, ...labels }, value: below })
      })
      values.push({ metricName: `${this.name}_bucket`, labels: { le: '+Inf', ...labels }, value: count })
      values.push({ metricName: `${this.name}_sum`, labels: { ...labels }, value: sum })
      values.push({ metricName: `${this.name}_count`, labels: { ...labels }, value: count })
    }
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator })
  }

  reset(): void {
    for (const series of this.#series) {
      series.counts.fill(0)
      series.sum = 0
      series.count = 0
    }
  }
}
