import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { auditedEventSchema, auditQuerySchema, auditReportSchema, type AuditedEvent } from '../schemas/audit.js'
import { ErrorEnvelopeSchema, errorResponses, windowReportRefusals, EventNoParamsSchema, ref, tokenRoute } from '../schemas/common.js'
import { notFound } from '../src/app-error.js'
import { auditFacts } from '../src/domain/audit/audit-event.js'
import { auditedEventRecord } from '../src/domain/audit/audited-event.js'
import { WindowAudit } from '../src/domain/audit/window-audit.js'
import { requiredWindow } from '../src/domain/time-window.js'
import { fromRequest } from '../src/infrastructure/http/request-input.js'
import { auditReportJson } from '../src/reports/audit-report.js'
import { keptWindow } from '../src/reports/kept-window.js'

/** Each baseband event's trace held against its datatrail, its heartbeats and the clock, for a window or one event. */
const audit: FastifyPluginAsyncTypebox = async (fastify) => {
  const { store, config, clock, streamedResponses, windowReads } = fastify
  const sites = config.TRACER_SITES
  const settingsNow = () => ({ sites, deadlines: config.STAGE_DEADLINES, now: clock() })
  const eventSchema = ref(auditedEventSchema(sites))

  fastify.get(
    '/audit',
    {
      schema: {
        ...tokenRoute('audit'),
        operationId: 'getAudit',
        summary: 'The audit of a window: every baseband event’s verdict and findings, and the counts by verdict',
        description:
          'The events of baseband-callbacks for the window (`start_time_utc <= time < end_time_utc`), each held against ' +
          'its datatrail, its heartbeats and the stage deadlines, ascending by event time then event_no. `verdict` and ' +
          '`site` narrow `events` only: `summary` always counts the whole window. The report is streamed, and its ' +
          '`summary` comes last, after `events`, since it is counted while they stream (the order of the members of a ' +
          'JSON object carries no meaning).',
        querystring: auditQuerySchema(sites),
        response: { 200: ref(auditReportSchema(sites), { description: 'The audit of the window.' }), ...errorResponses(400, 401), ...windowReportRefusals }
      }
    },
    async (request, reply) => {
      const { verdict, site } = request.query
      const window = fromRequest(['query'], () => requiredWindow(request.query, config.MAX_WINDOW_DAYS))
      const serialize = reply.compileSerializationSchema(eventSchema) as (event: AuditedEvent) => string
      // The 200 schema documents the report; its events are serialised by their schema one by one.
      reply.type('application/json; charset=utf-8')
      const audit = new WindowAudit(settingsNow(), { verdict, site })
      const turn = () => windowReads.turn(request.user.user_id)
      return streamedResponses.send(reply, auditReportJson(keptWindow(store, window, turn), window, audit, serialize))
    }
  )

  fastify.get(
    '/audit/:event_no',
    {
      schema: {
        ...tokenRoute('audit'),
        operationId: 'getEventAudit',
        summary: 'The audit of one event: its verdict and findings',
        description:
          'The event held against its datatrail, its heartbeats and the stage deadlines, as in the audit of a window. ' +
          '404 when the event is unknown, and when it asked for no baseband data (it has nothing to audit).',
        params: EventNoParamsSchema,
        response: {
          200: ref(auditedEventSchema(sites), { description: 'The audited event.' }),
          ...errorResponses(400, 401, 503),
          404: ref(ErrorEnvelopeSchema, { description: 'NotFound: no such event, or it asked for no baseband data.' })
        }
      }
    },
    async (request) => {
      const { event_no } = request.params
      // The event's kept facts, audited at this request's clock; without them the event says which refusal applies.
      const kept = await store.audits.find(event_no)
      const event = kept?.facts.event
      const nothingToAudit = () => notFound(`Event ${event_no} requested no baseband data: it has nothing to audit.`)
      if (kept === null || event == null) throw (await store.events.find(event_no)) === null ? notFound(`No event ${event_no}.`) : nothingToAudit()
      const audited = auditFacts(kept.facts, event, settingsNow())
      if (audited.sites.length === 0) throw nothingToAudit()
      return auditedEventRecord({ event_no, ...event }, audited)
    }
  )
}

export default audit
