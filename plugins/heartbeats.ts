import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { errorResponses, EventNoParamsSchema, PART_LIMIT, partHeaders, ref, tokenRoute } from '../schemas/common.js'
import { HeartbeatPartQuerySchema, heartbeatSchema } from '../schemas/heartbeats.js'
import { heartbeatOutput } from '../src/domain/event-status.js'
import { describePart } from '../src/infrastructure/streamed-responses/list-parts.js'

/** The `Link` of event-status and of each part here (with the part's own `limit`, when one was given). */
export function nextHeartbeatsPath(prefix: string, eventNo: number, afterId: number, limit?: number): string {
  return `${prefix}/heartbeats/${eventNo}?after_heartbeat_id=${afterId}${limit === undefined ? '' : `&limit=${limit}`}`
}

/** One event's heartbeats, a part at a time: a site may send more than one response should hold. */
const heartbeats: FastifyPluginAsyncTypebox = async (fastify) => {
  const { store, config, windowReads } = fastify

  fastify.get(
    '/heartbeats/:event_no',
    {
      schema: {
        ...tokenRoute('tracer'),
        operationId: 'listEventHeartbeats',
        summary: 'One event’s heartbeats, by heartbeat_id, a part at a time',
        description:
          `At most \`limit\` (default and most ${PART_LIMIT}) heartbeats with a heartbeat_id above \`after_heartbeat_id\`, ` +
          'ascending. `X-Total-Count` says how many the event has; when more follow, `Link` names the read of the next part. ' +
          'An event without heartbeats has an empty list.',
        params: EventNoParamsSchema,
        querystring: HeartbeatPartQuerySchema,
        response: {
          200: Type.Array(ref(heartbeatSchema(config.TRACER_SITES)), {
            description: 'The heartbeats, ascending by heartbeat_id.',
            headers: partHeaders({ header: 'X-Total-Count', of: 'heartbeats of the event' })
          }),
          ...errorResponses(400, 401, 503)
        }
      }
    },
    async (request, reply) => {
      const { event_no } = request.params
      const { after_heartbeat_id = null, limit = PART_LIMIT } = request.query
      // One more than asked for says whether any follow.
      const part = await windowReads.run(request.user.user_id, () => store.heartbeats.page(event_no, after_heartbeat_id, limit + 1))
      const shown = part.heartbeats.slice(0, limit)
      const last = shown.at(-1)?.heartbeat.heartbeat_id
      describePart(reply, {
        total: { header: 'x-total-count', count: part.total },
        next: part.heartbeats.length > limit && last !== undefined ? nextHeartbeatsPath(fastify.prefix, event_no, last, limit) : null
      })
      return shown.map((heartbeat) => heartbeatOutput(heartbeat.heartbeat))
    }
  )
}

export default heartbeats
