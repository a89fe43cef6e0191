import type { StageLatencyReport } from './api-types.js'
import { duration } from './format.js'
import { LatencyChart, rowLabel } from './latency-chart.js'

const seconds = (value: number | null) => (value === null ? '—' : duration(value))

/**
 * How long each stage takes over the window: a chart for the eye and the same figures, with the
 * counts, in a table (the chart's text alternative).
 */
export function LatencySection({ report }: { report: StageLatencyReport }) {
  const timed = report.stages.filter((row) => row.max_s !== null)
  const early = report.stages.reduce((sum, row) => sum + row.completed_before_event, 0)
  return (
    <section class="latency" aria-labelledby="latency-title">
      <h2 id="latency-title">Stage latency over the window</h2>
      <p class="muted">
        From the event to the first recorded change of each stage to complete. Stages completed by writes made straight into the
        database have no recorded change: they count as done, untimed.
      </p>
      {early > 0 && (
        <p class="latency-early" role="note">
          {early === 1 ? '1 stage was' : `${early} stages were`} recorded complete before {early === 1 ? 'its' : 'their'} event: an event time or a
          writer’s clock is wrong. {early === 1 ? 'It is' : 'They are'} left out of the latencies, counted under “Before event”, and
          each is an audit finding (Complete before the event).
        </p>
      )}
      <div class="latency-body">
        <figure class="latency-figure">
          {timed.length === 0 ? (
            <p class="empty">No stage of this window has a recorded completion yet.</p>
          ) : (
            <>
              <div role="img" aria-label="Bar chart of the median and 95th-percentile latency of each stage at each site; the table has the same figures.">
                <LatencyChart rows={timed} />
              </div>
              <figcaption class="chart-key" aria-hidden="true">
                <span class="swatch swatch-p95" /> 95th percentile <span class="swatch swatch-p50" /> median{' '}
                <span class="swatch swatch-max" /> longest
              </figcaption>
            </>
          )}
        </figure>
        <div class="table-frame">
          <table class="compact latency-table">
            <caption class="visually-hidden">Stage latency and completion counts by stage and site</caption>
            <thead>
              <tr>
                <th scope="col">Stage · site</th>
                <th scope="col" class="num">Done</th>
                <th scope="col" class="num">Not done</th>
                <th scope="col" class="num">Before event</th>
                <th scope="col" class="num">Median</th>
                <th scope="col" class="num">95th pct</th>
                <th scope="col" class="num">Longest</th>
              </tr>
            </thead>
            <tbody>
              {report.stages.map((row) => (
                <tr>
                  <th scope="row">{rowLabel(row)}</th>
                  <td class="num">{row.complete}</td>
                  <td class="num">{row.incomplete}</td>
                  <td class="num">{row.completed_before_event}</td>
                  <td class="num">{seconds(row.p50_s)}</td>
                  <td class="num">{seconds(row.p95_s)}</td>
                  <td class="num">{seconds(row.max_s)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </div>
    </section>
  )
}

