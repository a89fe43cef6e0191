import { useEffect, useState } from 'preact/hooks'
import { STATE_LABELS, STATE_MARKS, STATE_MEANINGS, type CellState } from './labels.js'

const ORDER: readonly CellState[] = ['complete', 'in_progress', 'stuck', 'contradiction']
/** The phone layout's query (styles.css): there the legend folds, to give the cards the screen. */
const PHONE = '(max-width: 760px)'

/**
 * What each colour means, in words, next to the grid. On a phone it is folded under one line, closed
 * at first (each card says its states in words anyway); wider, it is always open and its summary
 * hidden, as a line of the page rather than a control.
 */
export function Legend() {
  const [open, setOpen] = useState(() => !matchMedia(PHONE).matches)
  useEffect(() => {
    const phone = matchMedia(PHONE)
    const follow = () => setOpen(!phone.matches)
    phone.addEventListener('change', follow)
    return () => phone.removeEventListener('change', follow)
  }, [])
  return (
    <details class="legend" open={open} onToggle={(event) => setOpen(event.currentTarget.open)} aria-label="What the colours mean">
      <summary>What the colours mean</summary>
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
    </details>
  )
}
