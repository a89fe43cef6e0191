import { useEffect, useRef, useState } from 'preact/hooks'
import { readAudit, readLatency, readWindow } from './api.js'
import type { AuditSummary, StageLatencyReport, StreamedTransition, VerdictChange } from './api-types.js'
import { streamDeps } from './browser.js'
import { ApiError, describe, SessionEnded } from './errors.js'
import { applyTransition, applyVerdicts, joinWindow, reapply, replaceAudit, type EventRow } from './grid-model.js'
import type { Session } from './session.js'
import { TraceStream, type StreamState } from './stream.js'
import { windowAt, type Window, type WindowChoice } from './time-window.js'

export interface WindowView {
  window: Window
  generatedAt: string
  summary: AuditSummary
  rows: EventRow[]
  latency: StageLatencyReport
}

const EVENT_DEBOUNCE_MS = 250
const NEW_EVENT_DEBOUNCE_MS = 1000
const LATENCY_DEBOUNCE_MS = 5000
/** Transitions kept to apply again to a read that was under way when they came. */
const KEPT_TRANSITIONS = 1000

export type StreamFailure = Extract<StreamState, { kind: 'waiting' }>

export interface Tracer {
  view: WindowView | undefined
  loading: boolean
  error: string | undefined
  stream: StreamState
  /**
   * When the page last knew its data current (ms since the epoch): the moment the live stream was
   * lost. Undefined while it is current: live, and read again since the stream came back.
   */
  staleSince: number | undefined
  /** The stream's last failure: while the page is stale, why. */
  lastFailure: StreamFailure | undefined
  /** Counts the stream's connections: each one means writes may have been missed, so read again. */
  connections: number
  reload: () => void
  /** Counts the transitions of each event seen live, so an open panel knows to read again. */
  changes: ReadonlyMap<number, number>
}

/**
 * The window's audit, traces and stage latency, kept current: read when the window changes and
 * whenever the live stream (re)connects; each live transition changes its cell at once and has its
 * event's audit record read again, and each verdict change (a stage that turned stuck as its
 * deadline passed, with no write) replaces its event's audit record as it comes, with no read:
 * the changes of one read of the stream together, in one copy of the rows and one render.
 */
export function useTracer(session: Session, choice: WindowChoice, onSessionEnded: (error: SessionEnded) => void): Tracer {
  const [view, setView] = useState<WindowView | undefined>()
  const [loading, setLoading] = useState(true)
  const [error, setError] = useState<string | undefined>()
  const [stream, setStream] = useState<StreamState>({ kind: 'connecting' })
  const [changes, setChanges] = useState<ReadonlyMap<number, number>>(new Map())
  const [staleSince, setStaleSince] = useState<number | undefined>()
  const [lastFailure, setLastFailure] = useState<StreamFailure | undefined>()
  const [connections, setConnections] = useState(0)
  const live = useRef(false)
  const current = useRef<WindowView | undefined>(undefined)
  const generation = useRef(0)
  const timers = useRef(new Map<string, ReturnType<typeof setTimeout>>())
  const received = useRef<{ seq: number; transition: StreamedTransition }[]>([])
  const seq = useRef(0)
  const ended = useRef(onSessionEnded)
  ended.current = onSessionEnded

  const commit = (next: WindowView) => {
    current.current = next
    setView(next)
  }

  const failed = (failure: unknown) => {
    if (failure instanceof SessionEnded) ended.current(failure)
    else setError(`The window could not be read: ${describe(failure)}`)
  }

  const debounce = (key: string, ms: number, task: () => void) => {
    clearTimeout(timers.current.get(key))
    timers.current.set(
      key,
      setTimeout(() => (timers.current.delete(key), task()), ms)
    )
  }

  const load = async () => {
    const mine = ++generation.current
    const since = seq.current
    // Only a read that began while the stream was live has everything the outage hid.
    const liveAtStart = live.current
    setLoading(true)
    try {
      const data = await readWindow(session, windowAt(choice, Date.now()))
      if (mine !== generation.current) return
      const late = received.current.filter((entry) => entry.seq > since).map((entry) => entry.transition)
      commit({
        window: data.window,
        generatedAt: data.report.generated_at,
        summary: data.report.summary,
        rows: reapply(joinWindow(data.report, data.callbacks), late),
        latency: data.latency
      })
      for (const { event_no } of late) debounce(`event-${event_no}`, EVENT_DEBOUNCE_MS, () => void reaudit(event_no))
      setError(undefined)
      if (liveAtStart && live.current) setStaleSince(undefined)
    } catch (failure) {
      if (mine === generation.current) failed(failure)
    } finally {
      if (mine === generation.current) setLoading(false)
    }
  }
  const loadRef = useRef(load)
  loadRef.current = load

  const reaudit = async (eventNo: number) => {
    const mine = generation.current
    try {
      const audit = await readAudit(session, eventNo)
      const shown = current.current
      if (shown === undefined || mine !== generation.current) return
      const moved = replaceAudit(shown.rows, shown.summary, audit)
      commit({ ...shown, ...moved })
    } catch (failure) {
      // An event that no longer asks for baseband data has left the audit: the next read drops it.
      if (!(failure instanceof ApiError && failure.status === 404)) failed(failure)
    }
  }

  const relatency = async () => {
    const shown = current.current
    if (shown === undefined) return
    try {
      const latency = await readLatency(session, shown.window)
      if (current.current?.window === shown.window) commit({ ...current.current, latency })
    } catch (failure) {
      failed(failure)
    }
  }

  const onTransition = (transition: StreamedTransition) => {
    received.current.push({ seq: ++seq.current, transition })
    if (received.current.length > KEPT_TRANSITIONS) received.current.shift()
    setChanges((seen) => new Map(seen).set(transition.event_no, (seen.get(transition.event_no) ?? 0) + 1))
    const shown = current.current
    if (shown === undefined) return
    const rows = applyTransition(shown.rows, transition)
    if (rows === undefined) {
      // Not in the grid: perhaps a new event of a window that ends now. Read the window again.
      if ('preset' in choice) debounce('window', NEW_EVENT_DEBOUNCE_MS, () => void loadRef.current())
      return
    }
    commit({ ...shown, rows })
    debounce(`event-${transition.event_no}`, EVENT_DEBOUNCE_MS, () => void reaudit(transition.event_no))
    debounce('latency', LATENCY_DEBOUNCE_MS, () => void relatency())
  }
  const onTransitionRef = useRef(onTransition)
  onTransitionRef.current = onTransition

  const onVerdicts = (changes: VerdictChange[]) => {
    const shown = current.current
    if (shown === undefined) return
    const { rows, summary, left, missing } = applyVerdicts(shown.rows, shown.summary, changes)
    // An event that left the audit, or one the grid does not have yet: the window read decides.
    if (left || (missing && 'preset' in choice)) debounce('window', NEW_EVENT_DEBOUNCE_MS, () => void loadRef.current())
    if (rows !== shown.rows) commit({ ...shown, rows, summary })
  }
  const onVerdictsRef = useRef(onVerdicts)
  onVerdictsRef.current = onVerdicts

  useEffect(() => {
    void load()
    return () => {
      generation.current++
    }
  }, [choice])

  const onStreamState = (state: StreamState) => {
    setStream(state)
    if (state.kind === 'waiting') setLastFailure(state)
    if (state.kind !== 'live' && live.current) setStaleSince(Date.now())
    live.current = state.kind === 'live'
  }

  useEffect(() => {
    const following = new TraceStream(
      streamDeps((path, init) => session.fetch(path, init)),
      {
        onTransition: (transition) => onTransitionRef.current(transition),
        onVerdicts: (changes) => onVerdictsRef.current(changes),
        onState: onStreamState,
        onConnected: () => {
          setConnections((count) => count + 1)
          debounce('window', EVENT_DEBOUNCE_MS, () => void loadRef.current())
        },
        onSessionEnded: (failure) => ended.current(failure)
      }
    ).start()
    return () => {
      following.stop()
      for (const timer of timers.current.values()) clearTimeout(timer)
      timers.current.clear()
    }
  }, [session])

  return { view, loading, error, stream, staleSince, lastFailure, connections, reload: () => void load(), changes }
}
