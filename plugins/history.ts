import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ErrorEnvelopeSchema, errorResponses, EventNoParamsSchema, PART_LIMIT, partHeaders, ref, tokenRoute } from '../schemas/common.js'
import { HistoryQuerySchema, TraceHistorySchema } from '../schemas/history.js'
import { notFound } from '../src/app-error.js'
import { describePart } from '../src/infrastructure/list-parts.js'

/** One trace's recorded changes. */
const history: FastifyPluginAsyncTypebox = async (fastify) => {
  const { store, windowReads } = fastify

  fastify.get(
    '/history/:event_no',
    {
      schema: {
        ...tokenRoute('audit'),
        operationId: 'getTraceHistory',
        summary: 'Every recorded change of one event’s trace, oldest first',
        description:
          'The transitions update-trace recorded, oldest first (by `at`, then the order of writing): only changes ' +
          'of a stored value, each with the user who wrote it. Writes made straight into the database by other ' +
          'programs are not recorded. 404 when the event has neither a trace nor a transition. ' +
          `At most \`limit\` (default and most ${PART_LIMIT}) transitions from \`offset\` on: \`X-Total-Count\` says how many ` +
          'there are, and when more follow, `Link` names the read of the next part.',
        params: EventNoParamsSchema,
        querystring: HistoryQuerySchema,
        response: {
          200: ref(TraceHistorySchema, { description: 'The recorded transitions.', headers: partHeaders('X-Total-Count', 'recorded transitions of the event') }),
          ...errorResponses(400, 401, 503),
          404: ref(ErrorEnvelopeSchema, { description: 'NotFound: the event has neither a trace nor a recorded transition.' })
        }
      }
    },
    async (request, reply) => {
      const { event_no } = request.params
      const { offset = 0, limit = PART_LIMIT } = request.query
      const { transitions, total } = await windowReads.run(request.user.user_id, () => store.traces.historyPage(event_no, offset, limit))
      // Transitions are kept with their trace, so only an event without any needs the second read.
      if (total === 0 && (await store.traces.find(event_no)) === null) {
        throw notFound(`No trace and no transition is known for event ${event_no}.`)
      }
      const next = offset + transitions.length
      describePart(reply, {
        totalHeader: 'x-total-count',
        total,
        next: next < total ? `${fastify.prefix}/history/${event_no}?offset=${next}&limit=${limit}` : null
      })
      return { event_no, transitions }
    }
  )
}

export default history
