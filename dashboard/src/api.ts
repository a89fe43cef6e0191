import type { AuditedEvent, AuditReport, BasebandCallback, EventStatus, StageLatencyReport, TraceHistory } from './api-types.js'
import type { Session } from './session.js'
import { windowQuery, type Window } from './time-window.js'

const TRACER = '/v1/event-tracer'

/** Everything the grid and the chart show for one window, read together. */
export interface WindowData {
  window: Window
  report: AuditReport
  callbacks: BasebandCallback[]
  latency: StageLatencyReport
}

export async function readWindow(session: Session, window: Window, signal?: AbortSignal): Promise<WindowData> {
  const query = windowQuery(window)
  const [report, callbacks, latency] = await Promise.all([
    session.json<AuditReport>(`${TRACER}/audit?${query}`, signal),
    session.json<BasebandCallback[]>(`${TRACER}/baseband-callbacks?${query}`, signal),
    session.json<StageLatencyReport>(`${TRACER}/stage-latency?${query}`, signal)
  ])
  return { window, report, callbacks, latency }
}

export const readLatency = (session: Session, window: Window) =>
  session.json<StageLatencyReport>(`${TRACER}/stage-latency?${windowQuery(window)}`)

export const readAudit = (session: Session, eventNo: number) => session.json<AuditedEvent>(`${TRACER}/audit/${eventNo}`)

/** The event's status, and how many heartbeats it has in all (the status shows the first thousand). */
export async function readStatus(session: Session, eventNo: number) {
  const { body, headers } = await session.jsonWithHeaders<EventStatus>(`${TRACER}/event-status/${eventNo}`)
  const total = Number(headers.get('x-heartbeats-total'))
  return { status: body, heartbeatTotal: Number.isSafeInteger(total) && total > 0 ? total : body.heartbeats.length }
}

export const readHistory = (session: Session, eventNo: number) => session.json<TraceHistory>(`${TRACER}/history/${eventNo}`)
