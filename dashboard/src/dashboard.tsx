import { useLayoutEffect, useMemo, useRef } from 'preact/hooks'
import type { SessionEnded } from './errors.js'
import { EventList } from './event-list.js'
import { EventPanel } from './event-panel.js'
import { Filters } from './filters.js'
import { Grid } from './grid.js'
import { sitesOf } from './grid-model.js'
import { LatencySection } from './latency.js'
import { Legend } from './legend.js'
import { Masthead } from './masthead.js'
import type { Session } from './session.js'
import { useTracer } from './use-tracer.js'
import { useView } from './use-view.js'
import { WindowPicker } from './window-picker.js'
import { utc } from './format.js'

interface DashboardProps {
  session: Session
  /** Log out (no message) or return to the login form saying why the session ended. */
  onEnd: (message?: string) => void
}

export function Dashboard({ session, onEnd }: DashboardProps) {
  const [shown, go] = useView()
  const { choice, filters, event: open } = shown
  const returnFocus = useRef<HTMLElement | null>(null)
  const tracer = useTracer(session, choice, (ended: SessionEnded) => onEnd(ended.message))
  const { view } = tracer
  // A site that a link names keeps its place in the list even when the window has none of its events.
  const sites = useMemo(() => {
    const present = sitesOf(view?.rows ?? [])
    return filters.site === 'all' || present.includes(filters.site) ? present : [...present, filters.site]
  }, [view?.rows, filters.site])

  const openEvent = (eventNo: number, from: HTMLElement | null) => {
    returnFocus.current = from
    go({ ...shown, event: eventNo })
  }
  // However the panel closes (its button, Escape, Back), the focus goes back to where it was opened
  // from, before the browser paints.
  const wasOpen = useRef(open)
  useLayoutEffect(() => {
    const closed = wasOpen.current !== undefined && open === undefined
    wasOpen.current = open
    if (!closed) return
    const target = returnFocus.current
    if (target?.isConnected === true) target.focus()
    else document.querySelector<HTMLElement>('.grid [tabindex="0"]')?.focus()
  }, [open])

  return (
    <div class="shell">
      <Masthead
        username={session.username}
        stream={tracer.stream}
        staleSince={tracer.staleSince}
        lastFailure={tracer.lastFailure}
        onLogOut={() => onEnd()}
      />
      <div class={open === undefined ? 'layout' : 'layout with-panel'}>
        <main class="content" aria-busy={tracer.loading}>
          <section class="toolbar" aria-label="Time window">
            <WindowPicker choice={choice} onChoose={(next) => go({ ...shown, choice: next })} onReload={tracer.reload} />
            <p class="as-of muted">
              {view !== undefined &&
                `${utc(view.window.start_time_utc)} to ${utc(view.window.end_time_utc)} UTC · audited at ${utc(view.generatedAt)} UTC`}
              {tracer.loading && (view === undefined ? 'Reading the audit…' : ' · reading…')}
            </p>
          </section>
          {tracer.error !== undefined && (
            <p class="error banner" role="alert">
              {tracer.error}
            </p>
          )}
          {view !== undefined && (
            <div class={tracer.staleSince === undefined ? 'data' : 'data is-stale'}>
              <Filters summary={view.summary} sites={sites} filters={filters} onChange={(next) => go({ ...shown, filters: next })} />
              <Legend />
              <Grid rows={view.rows} filters={filters} openEvent={open} onOpen={openEvent} />
              <EventList rows={view.rows} filters={filters} openEvent={open} onOpen={openEvent} />
              <LatencySection report={view.latency} />
            </div>
          )}
        </main>
        {open !== undefined && (
          <EventPanel
            session={session}
            eventNo={open}
            row={view?.rows.find((row) => row.audit.event_no === open)}
            changes={tracer.changes.get(open) ?? 0}
            connections={tracer.connections}
            onClose={() => go({ ...shown, event: undefined })}
            onSessionEnded={(ended) => onEnd(ended.message)}
          />
        )}
      </div>
    </div>
  )
}
