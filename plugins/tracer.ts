import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { errorResponses, windowReportRefusals, EventNoParamsSchema, PART_LIMIT, partHeaders, ref, tokenRoute } from '../schemas/common.js'
import { eventStatusSchema } from '../schemas/event-status.js'
import { basebandCallbackSchema, CallbackQuerySchema } from '../schemas/trace.js'
import { compileEventStatus } from '../src/domain/event-status.js'
import { requiredWindow } from '../src/domain/time-window.js'
import { notFound } from '../src/app-error.js'
import { jsonArray } from '../src/reports/json-fragments.js'
import { describePart } from '../src/infrastructure/streamed-responses/list-parts.js'
import { fromRequest } from '../src/infrastructure/http/request-input.js'
import { keysetPages } from '../src/store/pages.js'
import audit from './audit.js'
import heartbeats, { nextHeartbeatsPath } from './heartbeats.js'
import history from './history.js'
import stageLatency from './stage-latency.js'
import traceStream from './trace-stream.js'
import tracerWrites from './tracer-writes.js'

/** Rows of about 1 KB a read: a stalled client's page lives into the old space, and each read of a page costs a turn and a statement (docs/performance.md). */
const PAGE_SIZE = 50

/** The event tracer: baseband callbacks of a window, one event's status, the audit and the trace writes. */
const tracer: FastifyPluginAsyncTypebox = async (fastify) => {
  const { store, config, streamedResponses, windowReads } = fastify
  const sites = config.TRACER_SITES
  fastify.addHook('onRequest', fastify.authenticate)

  const elementSchema = ref(basebandCallbackSchema(sites))

  fastify.get(
    '/baseband-callbacks',
    {
      schema: {
        ...tokenRoute('tracer'),
        operationId: 'listBasebandCallbacks',
        summary: 'Events of a window that should have triggered a baseband callback, with their traces',
        description:
          'Events with `start_time_utc <= time < end_time_utc` whose actions ask for baseband data at any site, ' +
          'ascending by event time then event_no. `trace` is omitted when none is stored. The array is streamed.',
        querystring: CallbackQuerySchema,
        response: { 200: Type.Array(elementSchema, { description: 'The events, oldest first.' }), ...errorResponses(400, 401), ...windowReportRefusals }
      }
    },
    async (request, reply) => {
      const window = fromRequest(['query'], () => requiredWindow(request.query, config.MAX_WINDOW_DAYS))
      const turn = () => windowReads.turn(request.user.user_id)
      const pages = keysetPages((after, limit) => store.views.callbackPage(window, after, limit), (row) => row.position, PAGE_SIZE, turn)
      // Each element comes as JSON text in the form the 200 schema documents (the contract tests check it).
      reply.type('application/json; charset=utf-8')
      return streamedResponses.send(reply, jsonArray(pages, (row) => row.json))
    }
  )

  fastify.get(
    '/event-status/:event_no',
    {
      schema: {
        ...tokenRoute('tracer'),
        operationId: 'getEventStatus',
        summary: 'One event’s full status: actions, classification, datatrail, trace and heartbeats',
        description:
          'All seven fields are present even when only some parts are stored; 404 when nothing at all is known of the event. ' +
          `\`heartbeats\` holds the first ${PART_LIMIT} by heartbeat_id: \`X-Heartbeats-Total\` says how many there are, ` +
          'and when there are more, `Link` names the heartbeats read that gives the rest.',
        params: EventNoParamsSchema,
        response: {
          200: ref(eventStatusSchema(sites), { description: 'All seven fields, always.', headers: partHeaders({ header: 'X-Heartbeats-Total', of: 'heartbeats of the event' }) }),
          ...errorResponses(400, 401, 404, 503)
        }
      }
    },
    async (request, reply) => {
      const { event_no } = request.params
      const parts = await windowReads.run(request.user.user_id, () => store.views.eventParts(event_no, { heartbeatLimit: PART_LIMIT }))
      const status = compileEventStatus(event_no, parts, sites)
      if (status === null) throw notFound(`No event, trace, datatrail or heartbeat is known for event ${event_no}.`)
      const last = parts.heartbeats.at(-1)?.heartbeat.heartbeat_id
      const more = parts.heartbeats.length < parts.heartbeatTotal && last !== undefined
      describePart(reply, {
        total: { header: 'x-heartbeats-total', count: parts.heartbeatTotal },
        next: more ? nextHeartbeatsPath(fastify.prefix, event_no, last) : null
      })
      return status
    }
  )

  // Under this prefix and its authentication: the reads about the audit, then the writes.
  await fastify.register(audit)
  await fastify.register(heartbeats)
  await fastify.register(history)
  await fastify.register(stageLatency)
  await fastify.register(traceStream)
  await fastify.register(tracerWrites)
}

export default tracer
