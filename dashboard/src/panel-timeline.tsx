import type { TraceHistory } from './api-types.js'
import { utc } from './format.js'
import { parseKey } from './grid-model.js'
import { placeOf } from './labels.js'

/** Every recorded change of the trace, oldest first, as a timeline. */
export function Timeline({ history }: { history: TraceHistory | null }) {
  const transitions = history?.transitions ?? []
  return (
    <section aria-labelledby="history-title">
      <h3 id="history-title">History ({transitions.length})</h3>
      {transitions.length === 0 ? (
        <p class="muted">
          {history === null ? 'No trace is stored for this event yet.' : 'No change recorded.'} Writes made straight into the
          database by other programs are not recorded.
        </p>
      ) : (
        <ol class="timeline">
          {transitions.map((transition) => {
            const place = parseKey(transition.key)
            return (
              <li>
                <time dateTime={new Date(transition.at * 1000).toISOString()}>{utc(transition.at * 1000)} UTC</time>{' '}
                <strong>{place === undefined ? transition.key : placeOf(place.site, place.stage)}</strong>{' '}
                {transition.from ?? 'no trace'} → {transition.to} <span class="muted">by {transition.by}</span>
              </li>
            )
          })}
        </ol>
      )}
    </section>
  )
}
