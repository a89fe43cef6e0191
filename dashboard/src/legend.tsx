import { STATE_LABELS, STATE_MARKS, STATE_MEANINGS, type CellState } from './labels.js'

const ORDER: readonly CellState[] = ['complete', 'in_progress', 'stuck', 'contradiction']

/** What each colour means, in words, next to the grid. */
export function Legend() {
  return (
    <section class="legend" aria-labelledby="legend-title">
      <h2 id="legend-title" class="visually-hidden">
        What the colours mean
      </h2>
      <dl>
        {ORDER.map((state) => (
          <div class="legend-item">
            <dt>
              <span class={`chip state-${state}`}>
                <span aria-hidden="true">{STATE_MARKS[state]} </span>
                {STATE_LABELS[state]}
              </span>
            </dt>
            <dd>{STATE_MEANINGS[state]}</dd>
          </div>
        ))}
      </dl>
    </section>
  )
}
