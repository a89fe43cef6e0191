import { useMemo } from 'preact/hooks'
import { waitingPlaces, wrongPlaces } from './event-summary.js'
import { shortUtc } from './format.js'
import { visibleRows, type EventRow, type Filters } from './grid-model.js'
import { STATE_LABELS, STATE_MARKS } from './labels.js'

interface EventListProps {
  rows: readonly EventRow[]
  filters: Filters
  openEvent: number | undefined
  onOpen: (eventNo: number, from: HTMLElement | null) => void
}

/**
 * The grid as a phone shows it (the stylesheet picks one or the other by width): one card per
 * event, newest first, with its number, its verdict and, in words, each stage that is wrong, or
 * where it waits. A card opens the event's panel, which holds its whole row of the grid.
 */
export function EventList({ rows, filters, openEvent, onOpen }: EventListProps) {
  const shown = useMemo(() => visibleRows(rows, filters).reverse(), [rows, filters])
  if (shown.length === 0) return null
  return (
    <ol class="event-list" aria-label="Events of the window, newest first">
      {shown.map(({ row, sites }) => {
        const { event_no: eventNo, verdict, timestamp_utc: time } = row.audit
        const wrong = wrongPlaces(row, sites)
        const waiting = verdict === 'in_progress' ? waitingPlaces(row, sites) : []
        return (
          <li key={eventNo} class={`event-card card-${verdict}${openEvent === eventNo ? ' is-open' : ''}`}>
            <button type="button" class="card-open" data-event={eventNo} onClick={(event) => onOpen(eventNo, event.currentTarget)}>
              <span class="card-head">
                <strong class="card-no">#{eventNo}</strong>
                <span class={`chip state-${verdict}`}>
                  <span aria-hidden="true">{STATE_MARKS[verdict]} </span>
                  {STATE_LABELS[verdict]}
                </span>
                <time class="card-time" dateTime={time}>
                  {shortUtc(time)}
                </time>
              </span>
              <span class="card-places">
                {wrong.map(({ place, state }) => (
                  <span class={`chip state-${state}`}>
                    <span aria-hidden="true">{STATE_MARKS[state]} </span>
                    {place} {STATE_LABELS[state]}
                  </span>
                ))}
                {waiting.length > 0 && <span class="card-note">waiting on {waiting.join(', ')}</span>}
                {verdict === 'complete' && <span class="card-note">every stage complete</span>}
                {row.stale && <span class="card-note">updating…</span>}
              </span>
            </button>
          </li>
        )
      })}
    </ol>
  )
}
