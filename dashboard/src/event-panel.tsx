import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks'
import { readAudit, readHistory, readStatus } from './api.js'
import type { AuditedEvent, EventStatus, TraceHistory } from './api-types.js'
import { describe, SessionEnded } from './errors.js'
import { utc } from './format.js'
import type { EventRow } from './grid-model.js'
import { STATE_LABELS, STATE_MARKS } from './labels.js'
import { Findings } from './panel-findings.js'
import { Datatrail, Heartbeats, SiteStages } from './panel-status.js'
import { Timeline } from './panel-timeline.js'
import type { Session } from './session.js'

interface EventPanelProps {
  session: Session
  eventNo: number
  /** The event's row in the grid, when it is there (the filters may hide it). */
  row: EventRow | undefined
  /** How many live transitions of the event have arrived: a change means read again. */
  changes: number
  /** The live stream's connections so far: a new one means writes may have been missed, so read again. */
  connections: number
  onClose: () => void
  onSessionEnded: (error: SessionEnded) => void
}

interface Details {
  audit: AuditedEvent
  status: EventStatus
  /** The event's heartbeats in all, of which the status holds the first thousand. */
  heartbeatTotal: number
  /** Null when the event has no stored trace, and so no history. */
  history: TraceHistory | null
}

const REREAD_DEBOUNCE_MS = 300

/** One event: its verdict, each site's stages, the findings, datatrail and heartbeats, and its history. */
export function EventPanel({ session, eventNo, row, changes, connections, onClose, onSessionEnded }: EventPanelProps) {
  const [details, setDetails] = useState<Details | undefined>()
  const [error, setError] = useState<string | undefined>()
  const heading = useRef<HTMLHeadingElement>(null)

  // The focus on the panel, and Escape to close it, from the frame the panel first shows in, as the
  // focus goes back on closing (dashboard.tsx): an effect after the paint left a key pressed at once
  // on the cell that opened it.
  useLayoutEffect(() => heading.current?.focus(), [eventNo])
  // Escape closes the panel wherever the focus is, unless something nearer used it (a tooltip).
  useLayoutEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.key === 'Escape' && !event.defaultPrevented) onClose()
    }
    document.addEventListener('keydown', onKey)
    return () => document.removeEventListener('keydown', onKey)
  }, [onClose])
  useEffect(() => {
    let current = true
    const read = async () => {
      try {
        const [audit, { status, heartbeatTotal }] = await Promise.all([readAudit(session, eventNo), readStatus(session, eventNo)])
        // Without a stored trace there is no history to ask for (the service would answer 404).
        const history = status.trace.update_timestamp > 0 || changes > 0 ? await readHistory(session, eventNo) : null
        if (!current) return
        setDetails({ audit, status, heartbeatTotal, history })
        setError(undefined)
      } catch (failure) {
        if (!current) return
        if (failure instanceof SessionEnded) onSessionEnded(failure)
        else setError(describe(failure))
      }
    }
    const timer = setTimeout(() => void read(), changes === 0 ? 0 : REREAD_DEBOUNCE_MS)
    return () => {
      current = false
      clearTimeout(timer)
    }
  }, [session, eventNo, changes, connections])

  const shown = details?.status.event_no === eventNo ? details : undefined
  const audit = shown?.audit ?? row?.audit
  return (
    <aside class="panel" aria-labelledby="panel-title">
      <header class="panel-head">
        <h2 id="panel-title" ref={heading} tabIndex={-1}>
          Event {eventNo}
        </h2>
        <button type="button" class="close" onClick={onClose} aria-label="Close the event panel">
          <span aria-hidden="true">✕</span> Close
        </button>
      </header>
      {audit !== undefined && (
        <p class="panel-facts">
          <span class={`chip state-${audit.verdict}`}>
            <span aria-hidden="true">{STATE_MARKS[audit.verdict]} </span>
            {STATE_LABELS[audit.verdict]}
          </span>{' '}
          {utc(audit.timestamp_utc)} UTC · SNR {audit.snr.toFixed(1)} · {audit.known_source_name}
          {shown !== undefined && <> · classification: {shown.status.tsar_classification}</>}
        </p>
      )}
      {error !== undefined && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {shown === undefined ? (
        error === undefined && <p class="muted">Reading the event…</p>
      ) : (
        <>
          {/* What is wrong where first; the findings (there may be a dozen) say why. */}
          <SiteStages audit={shown.audit} status={shown.status} />
          <Findings findings={shown.audit.findings} />
          <Datatrail audit={shown.audit} status={shown.status} />
          <Heartbeats status={shown.status} total={shown.heartbeatTotal} />
          <Timeline history={shown.history} />
        </>
      )}
    </aside>
  )
}
