/**
 * TEMPORARY, TEST-ONLY. Stand-ins for the routes the dashboard reads that another branch is building:
 * GET /v1/event-tracer/audit, /audit/{event_no}, /history/{event_no}, /stage-latency and /stream.
 * They answer the documented URLs with the documented shapes, computed from the real store with the
 * real audit and stage-latency functions; transitions are recorded in memory from the real
 * update-trace route. When the real routes land, delete this file and its two calls in fixture.ts:
 * the page talks only to those URLs and shapes, so nothing else changes.
 */
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import type { ServerResponse } from 'node:http'
import type { AuditedEvent } from '../../schemas/audit.js'
import type { StreamedTransition } from '../../schemas/history.js'
import { auditEvent } from '../../src/domain/audit/audit-event.js'
import { auditedEventRecord } from '../../src/domain/audit/audited-event.js'
import { requestedSites } from '../../src/domain/audit/requested-sites.js'
import { countInSummary, emptySummary } from '../../src/domain/audit/summary.js'
import { StageLatency } from '../../src/domain/stage-latency.js'
import { requiredWindow, toIsoUtc, type TimeWindow } from '../../src/domain/time-window.js'
import { keyForUpdate, type Stage } from '../../src/domain/trace.js'
import { notFound } from '../../src/errors.js'

/** Transitions written through update-trace since the app started, and who listens for new ones. */
export class TransitionLog {
  readonly all: StreamedTransition[] = []
  readonly listeners = new Set<(transition: StreamedTransition) => void>()

  add(transition: StreamedTransition): void {
    this.all.push(transition)
    for (const listener of this.listeners) listener(transition)
  }

  of(eventNo: number) {
    return this.all.filter((transition) => transition.event_no === eventNo).map(({ event_no: _, ...rest }) => rest)
  }
}

type UpdateBody = { event: number; site: string; stage: Stage | 'tsar_classification'; status: 'complete' | 'incomplete' }
const before = new WeakMap<FastifyRequest, string | null>()

/**
 * Records a transition for every update-trace that changes a stored value. Call before registering
 * the app: it adds hooks to the route as Fastify registers it.
 */
export function recordTransitions(app: FastifyInstance, log: TransitionLog): void {
  app.addHook('onRoute', (route) => {
    if (route.url !== '/v1/event-tracer/update-trace' || route.method !== 'POST') return
    const readBefore = async (request: FastifyRequest) => {
      const { event, site, stage } = request.body as UpdateBody
      const trace = await app.store.findTrace(event)
      before.set(request, trace === null ? null : ((trace[keyForUpdate(stage, site)] as string | undefined) ?? null))
    }
    const recordAfter = async (request: FastifyRequest, reply: FastifyReply) => {
      if (reply.statusCode !== 200 || !before.has(request)) return
      const { event, site, stage, status } = request.body as UpdateBody
      const from = before.get(request)!
      if (from === status) return
      log.add({ event_no: event, key: keyForUpdate(stage, site), from, to: status, at: Date.now() / 1000, by: request.user.user_id })
    }
    route.preHandler = [...[route.preHandler ?? []].flat(), readBefore]
    route.onResponse = [...[route.onResponse ?? []].flat(), recordAfter]
  })
}

type WindowQuery = { start_time_utc: string; end_time_utc: string; verdict?: string; site?: string }

export const fakeTracerRoutes: FastifyPluginAsync<{ log: TransitionLog }> = async (fastify, { log }) => {
  const { store, config } = fastify
  const sites = config.TRACER_SITES
  const settings = () => ({ sites, deadlines: config.STAGE_DEADLINES, now: Date.now() })
  fastify.addHook('onRequest', fastify.authenticate)

  async function* eventsOf(window: TimeWindow) {
    for await (const page of store.basebandCallbacks(window, 500)) {
      for (const row of page) {
        const parts = await store.eventParts(row.event.event_no)
        if (parts.event !== null) yield { ...parts, event: parts.event }
      }
    }
  }
  const windowOf = (query: WindowQuery) => requiredWindow(query, config.MAX_WINDOW_DAYS)
  const echo = (window: TimeWindow) => ({ start_time_utc: toIsoUtc(window.start), end_time_utc: toIsoUtc(window.end) })

  fastify.get<{ Querystring: WindowQuery }>('/audit', { schema: { hide: true } }, async (request) => {
    const window = windowOf(request.query)
    const summary = emptySummary()
    const events: AuditedEvent[] = []
    for await (const parts of eventsOf(window)) {
      const audit = auditEvent(parts, settings())
      countInSummary(summary, audit)
      const record = auditedEventRecord(parts.event, audit)
      if (request.query.verdict !== undefined && record.verdict !== request.query.verdict) continue
      if (request.query.site !== undefined && !record.sites.includes(request.query.site)) continue
      events.push(record)
    }
    return { window: echo(window), generated_at: new Date().toISOString(), summary, events }
  })

  fastify.get<{ Params: { event_no: string } }>('/audit/:event_no', { schema: { hide: true } }, async (request) => {
    const eventNo = Number(request.params.event_no)
    const parts = await store.eventParts(eventNo)
    if (parts.event === null) throw notFound(`No event ${eventNo}.`)
    const audit = auditEvent({ ...parts, event: parts.event }, settings())
    if (audit.sites.length === 0) throw notFound(`Event ${eventNo} asked for no baseband data: it has nothing to audit.`)
    return auditedEventRecord(parts.event, audit)
  })

  fastify.get<{ Params: { event_no: string } }>('/history/:event_no', { schema: { hide: true } }, async (request) => {
    const eventNo = Number(request.params.event_no)
    const transitions = log.of(eventNo)
    if (transitions.length === 0 && (await store.findTrace(eventNo)) === null) throw notFound(`No trace of event ${eventNo}.`)
    return { event_no: eventNo, transitions }
  })

  fastify.get<{ Querystring: WindowQuery }>('/stage-latency', { schema: { hide: true } }, async (request) => {
    const window = windowOf(request.query)
    const latency = new StageLatency(sites)
    for await (const parts of eventsOf(window)) {
      latency.add({
        timestamp: parts.event.timestamp,
        sites: requestedSites(parts.event.actions, sites),
        trace: parts.trace,
        transitions: log.of(parts.event.event_no)
      })
    }
    return { window: echo(window), stages: latency.rows() }
  })

  const open = new Set<ServerResponse>()
  fastify.addHook('preClose', async () => {
    for (const response of open) response.end()
  })
  fastify.get<{ Querystring: { event_no?: string; site?: string } }>('/stream', { schema: { hide: true } }, (request, reply) => {
    const { event_no, site } = request.query
    const wanted = (transition: StreamedTransition) =>
      (event_no === undefined || transition.event_no === Number(event_no)) &&
      (site === undefined || transition.key.endsWith(`/sites/${site}`))
    reply.hijack()
    const response = reply.raw
    response.writeHead(200, { ...(reply.getHeaders() as Record<string, string>), 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
    response.write(': connected\n\n')
    const send = (transition: StreamedTransition) => {
      if (wanted(transition)) response.write(`event: transition\ndata: ${JSON.stringify(transition)}\n\n`)
    }
    log.listeners.add(send)
    open.add(response)
    response.on('close', () => {
      log.listeners.delete(send)
      open.delete(response)
    })
  })
}
