import type { ComponentChildren } from 'preact'
import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import type { Cell } from './cells.js'
import { utc, snr } from './format.js'
import { moveFocus, positionOf, tabStopAt, type TabStop } from './grid-keys.js'
import { classificationCell, stageCell, STAGES, visibleRows, type EventRow, type Filters } from './grid-model.js'
import { RULE_LABELS, STAGE_LABELS, STATE_LABELS, STATE_MARKS, placeOf } from './labels.js'
import { pointerAtRest } from './pointer-rest.js'
import { Tooltip, type Tip } from './tooltip.js'

interface GridProps {
  rows: readonly EventRow[]
  filters: Filters
  openEvent: number | undefined
  onOpen: (eventNo: number, from: HTMLElement | null) => void
}

/** Columns of the matrix the arrow keys move through; `span` columns cover all of an event's sites. */
const COLUMNS = [
  { id: 'event', span: true },
  { id: 'time', span: true },
  { id: 'snr', span: true },
  { id: 'source', span: true },
  { id: 'classification', span: true },
  { id: 'site', span: false },
  ...STAGES.map((stage) => ({ id: stage, span: false })),
  { id: 'verdict', span: true }
] as const

const cellId = (eventNo: number, site: string, column: (typeof COLUMNS)[number]) =>
  column.span ? `${eventNo}:${column.id}` : `${eventNo}:${site}:${column.id}`

const descriptionId = (id: string) => `d-${id.replace(/:/g, '-')}`

const HOVER_DELAY_MS = 300

/** One sentence per finding; the verdict cell, which sums up several places, names each one's place. */
function findingLines(cell: Cell, withPlace: boolean): string[] {
  return cell.findings.map(
    (finding) => `${withPlace ? `${placeOf(finding.site, finding.stage)}, ` : ''}${RULE_LABELS[finding.rule]}: ${finding.detail}.`
  )
}

/**
 * Events × requested sites × stages, one row group per event. One tab stop: the arrow keys move
 * inside (Home, End, Page Up and Down too), Tab leaves, Enter or Space opens the event's panel.
 * Each state is a colour and a word; the findings behind a cell show on hover and focus, and are
 * its accessible description.
 */
export function Grid({ rows, filters, openEvent, onOpen }: GridProps) {
  const [newestFirst, setNewestFirst] = useState(true)
  // The tab stop, by cell id (rows come and go with live updates and filters), and the row it was
  // reached in (a cell spanning an event's rows is in several).
  const [active, setActive] = useState<TabStop | undefined>()
  const moving = useRef<TabStop | undefined>(undefined)
  const [tip, setTip] = useState<Tip | undefined>()
  const table = useRef<HTMLTableElement>(null)
  const hover = useRef<ReturnType<typeof setTimeout> | undefined>(undefined)
  useEffect(() => () => clearTimeout(hover.current), [])

  const shown = useMemo(() => {
    const visible = visibleRows(rows, filters)
    return newestFirst ? visible.reverse() : visible
  }, [rows, filters, newestFirst])
  const matrix = useMemo(
    () =>
      shown.flatMap(({ row, sites }) =>
        (sites.length === 0 ? [''] : sites).map((site) => COLUMNS.map((column) => cellId(row.audit.event_no, site, column)))
      ),
    [shown]
  )
  const at = tabStopAt(matrix, active)
  const activeId = matrix[at.row]?.[at.column]

  const cellOfElement = (element: EventTarget | null) => (element as HTMLElement | null)?.closest<HTMLElement>('[data-cell]') ?? null
  const eventOf = (element: HTMLElement) => Number(element.dataset.event)

  const onKeyDown = (event: KeyboardEvent) => {
    const cell = cellOfElement(event.target)
    if (cell === null) return
    if (event.key === 'Enter' || event.key === ' ') {
      event.preventDefault()
      onOpen(eventOf(cell), cell)
      return
    }
    if (event.key === 'Escape' && tip !== undefined) {
      event.preventDefault()
      setTip(undefined)
      return
    }
    const next = moveFocus(matrix, at, event.key, event.ctrlKey || event.metaKey)
    if (next === undefined) return
    event.preventDefault()
    moving.current = { id: matrix[next.row]![next.column]!, row: next.row }
    setActive(moving.current)
    table.current?.querySelector<HTMLElement>(`[data-cell="${moving.current.id}"]`)?.focus()
  }
  const onFocusIn = (event: FocusEvent) => {
    const cell = cellOfElement(event.target)
    if (cell === null) return
    const id = cell.dataset.cell!
    // Reached by the arrow keys: already the tab stop. By a click or Tab: it becomes the tab stop.
    if (moving.current?.id !== id) setActive({ id, row: positionOf(matrix, id)?.row ?? 0 })
    moving.current = undefined
    showTip(cell)
  }
  const showTip = (cell: HTMLElement) => {
    const lines = cell.dataset.tip
    setTip(lines === undefined ? undefined : { id: cell.dataset.cell!, anchor: cell, lines: JSON.parse(lines) as string[] })
  }

  const stateCell = (id: string, eventNo: number, cell: Cell, title: string, span = 1, classes = '') => {
    const lines = findingLines(cell, classes.includes('verdict'))
    const describedBy = lines.length === 0 ? undefined : descriptionId(id)
    const tipLines = [`${title}: ${STATE_LABELS[cell.state]}`, ...(lines.length === 0 ? [] : lines)]
    return (
      <td
        class={`state state-${cell.state} ${classes}`}
        rowSpan={span}
        data-cell={id}
        data-event={eventNo}
        data-tip={JSON.stringify(tipLines)}
        tabIndex={id === activeId ? 0 : -1}
        aria-describedby={describedBy}
      >
        <span aria-hidden="true" class="mark">
          {STATE_MARKS[cell.state]}
        </span>{' '}
        {STATE_LABELS[cell.state]}
        {describedBy !== undefined && (
          <span id={describedBy} hidden>
            {lines.join(' ')}
          </span>
        )}
      </td>
    )
  }

  const plain = (id: string, eventNo: number, content: ComponentChildren, span: number, classes = '') => (
    <td class={classes} rowSpan={span} data-cell={id} data-event={eventNo} tabIndex={id === activeId ? 0 : -1}>
      {content}
    </td>
  )

  if (shown.length === 0) {
    return (
      <p class="empty" role="status">
        {rows.length === 0 ? 'No event of this window asked for baseband data.' : 'No event matches the filters.'}
      </p>
    )
  }

  return (
    <div class="grid-frame">
      <table
        ref={table}
        class="grid"
        role="grid"
        aria-label="Baseband callbacks of the window: each event's stages at each requested site"
        onKeyDown={onKeyDown}
        onFocusIn={onFocusIn}
        onFocusOut={() => setTip(undefined)}
        onMouseOver={(event) => {
          // Only a pointer the user moves: not one the grid came under (after logging in, a scroll).
          if (pointerAtRest(event)) return
          const cell = cellOfElement(event.target)
          clearTimeout(hover.current)
          // A short wait, as for a native tooltip: a pointer crossing the grid does not flash every cell.
          if (cell === null || cell.dataset.cell === tip?.id) return
          setTip(undefined)
          hover.current = setTimeout(() => showTip(cell), HOVER_DELAY_MS)
        }}
        onMouseLeave={(event) => {
          clearTimeout(hover.current)
          // Moving onto the tooltip keeps it, so its text can be selected.
          if ((event.relatedTarget as Element | null)?.closest('.tooltip') == null) setTip(undefined)
        }}
        onClick={(event) => {
          const cell = cellOfElement(event.target)
          if (cell !== null) onOpen(eventOf(cell), cell)
        }}
      >
        <thead>
          <tr>
            <th scope="col">Event</th>
            <th scope="col" aria-sort={newestFirst ? 'descending' : 'ascending'}>
              <button type="button" class="sort" onClick={() => setNewestFirst(!newestFirst)}>
                Time (UTC) <span aria-hidden="true">{newestFirst ? '↓' : '↑'}</span>
                <span class="visually-hidden">{newestFirst ? ', newest first' : ', oldest first'}</span>
              </button>
            </th>
            <th scope="col" class="num">SNR</th>
            <th scope="col">Source</th>
            <th scope="col">{STAGE_LABELS.tsar_classification}</th>
            <th scope="col">Site</th>
            {STAGES.map((stage) => (
              <th scope="col">{STAGE_LABELS[stage]}</th>
            ))}
            <th scope="col">Verdict</th>
          </tr>
        </thead>
        {shown.map(({ row, sites }) => {
          const eventNo = row.audit.event_no
          const span = Math.max(1, sites.length)
          const id = (column: (typeof COLUMNS)[number], site = '') => cellId(eventNo, site, column)
          const verdict: Cell = { state: row.audit.verdict, findings: row.audit.findings }
          const siteRows = sites.length === 0 ? [''] : sites
          return (
            <tbody key={eventNo} class={`event${openEvent === eventNo ? ' is-open' : ''}${row.stale ? ' stale' : ''}`}>
              {siteRows.map((site, index) => (
                <tr key={site}>
                  {index === 0 && (
                    <>
                      <th
                        scope="rowgroup"
                        rowSpan={span}
                        class="event-no"
                        data-cell={id(COLUMNS[0])}
                        data-event={eventNo}
                        tabIndex={id(COLUMNS[0]) === activeId ? 0 : -1}
                        aria-label={`Event ${eventNo}`}
                      >
                        <span aria-hidden="true">#</span>
                        {eventNo}
                      </th>
                      {plain(id(COLUMNS[1]), eventNo, <time dateTime={row.audit.timestamp_utc}>{utc(row.audit.timestamp_utc)}</time>, span, 'time')}
                      {plain(id(COLUMNS[2]), eventNo, snr(row.audit.snr), span, 'num')}
                      {plain(id(COLUMNS[3]), eventNo, row.audit.known_source_name, span, 'source')}
                      {stateCell(id(COLUMNS[4]), eventNo, classificationCell(row), STAGE_LABELS.tsar_classification, span)}
                    </>
                  )}
                  <th scope="row" class="site" data-cell={id(COLUMNS[5], site)} data-event={eventNo} tabIndex={id(COLUMNS[5], site) === activeId ? 0 : -1}>
                    {site === '' ? 'none requested' : site}
                  </th>
                  {STAGES.map((stage, s) =>
                    site === ''
                      ? plain(id(COLUMNS[6 + s]!, site), eventNo, '—', 1)
                      : stateCell(id(COLUMNS[6 + s]!, site), eventNo, stageCell(row, site, stage), placeOf(site, stage))
                  )}
                  {index === 0 &&
                    stateCell(id(COLUMNS[10]!), eventNo, verdict, `Event ${eventNo}`, span, `verdict${row.stale ? ' updating' : ''}`)}
                </tr>
              ))}
            </tbody>
          )
        })}
      </table>
      {tip !== undefined && <Tooltip tip={tip} onLeave={() => setTip(undefined)} />}
    </div>
  )
}
