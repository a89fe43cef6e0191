import type { AuditedEvent, AuditReport, EventStatus } from '../page-types.js'
import { server } from './context.js'

export const STAGES = ['baseband_callback_request', 'baseband_conversion', 'data_registration', 'data_replication_to_minoc'] as const

/** GET through the API with the writer's token, as a script of the pipeline would. */
export async function apiGet<T>(path: string): Promise<T> {
  const response = await fetch(`${server.url}${path}`, { headers: { authorization: server.writerToken } })
  if (!response.ok) throw new Error(`${path} answered ${response.status}`)
  return (await response.json()) as T
}

export const statusOf = (eventNo: number) => apiGet<EventStatus>(`/v1/event-tracer/event-status/${eventNo}`)

/**
 * The first (event, site) of the report, newest first as the grid shows them, for which `wanted`
 * holds given the event's current status: the data a test needs, read as it is now.
 */
export async function pick(
  report: AuditReport,
  wanted: (event: AuditedEvent, site: string, status: EventStatus) => boolean
): Promise<{ event: AuditedEvent; site: string; status: EventStatus }> {
  for (const event of [...report.events].reverse()) {
    const status = await statusOf(event.event_no)
    const site = event.sites.find((candidate) => wanted(event, candidate, status))
    if (site !== undefined) return { event, site, status }
  }
  throw new Error('no event of the demo window fits this test')
}

export const traceValue = (status: EventStatus, stage: string, site: string) =>
  (status.trace as Record<string, unknown>)[`stages/${stage}/sites/${site}`]

/** The site's datatrail member, as the audit reads it: `baseband` at the primary site. */
export const memberOf = (status: EventStatus, site: string) => status.datatrail[`${site}_baseband`] ?? status.datatrail['baseband']
