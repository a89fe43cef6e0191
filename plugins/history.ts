import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ErrorEnvelopeSchema, errorResponse, errorResponses, EventNoParamsSchema, PART_LIMIT, partHeaders, ref, tokenRoute } from '../schemas/common.js'
import { HistoryQuerySchema, TraceHistorySchema } from '../schemas/history.js'
import { notFound } from '../src/app-error.js'
import { decodeHistoryAfter, encodeHistoryAfter } from '../src/domain/history-cursor.js'
import { InputError } from '../src/domain/input-error.js'
import { describePart } from '../src/infrastructure/streamed-responses/list-parts.js'
import { fromRequest } from '../src/infrastructure/http/request-input.js'

/** One trace's recorded changes, a part at a time. */
const history: FastifyPluginAsyncTypebox = async (fastify) => {
  const { store, streamedResponses, windowReads } = fastify

  fastify.get(
    '/history/:event_no',
    {
      schema: {
        ...tokenRoute('audit'),
        operationId: 'getTraceHistory',
        summary: 'Every recorded change of one event’s trace, oldest first, a part at a time',
        description:
          'The transitions update-trace recorded, oldest first (by `at`, then the order of writing): only changes ' +
          'of a stored value, each with the user who wrote it. Writes made straight into the database by other ' +
          'programs are not recorded. 404 when the event has neither a trace nor a transition. ' +
          `At most \`limit\` (default and most ${PART_LIMIT}) transitions after \`after\`: when more follow, ` +
          '`Link` names the read of the next part; no total is given (keeping one would cost every update-trace a write). A part costs the same at any depth. ' +
          'Each read holds one of the client’s share of the expensive reads while it is made (429 beyond the share).',
        params: EventNoParamsSchema,
        querystring: HistoryQuerySchema,
        response: {
          200: ref(TraceHistorySchema, { description: 'The recorded transitions.', headers: partHeaders() }),
          ...errorResponses(400, 401),
          404: ref(ErrorEnvelopeSchema, { description: 'NotFound: the event has neither a trace nor a recorded transition.' }),
          429: errorResponse(
            429,
            'TooManyRequests: the user holds MAX_STREAMED_RESPONSES_PER_CLIENT of this instance’s expensive reads (window reports ' +
              'and history parts) already, or the client address twice that; wait `Retry-After` seconds.'
          ),
          503: errorResponse(
            503,
            'ServiceUnavailable: the store is unreachable, or MAX_STREAMED_RESPONSES expensive reads are in flight in this instance; ' +
              'wait `Retry-After` seconds, the service recovers by itself.'
          )
        }
      }
    },
    async (request, reply) => {
      const { event_no } = request.params
      const { after, offset = 0, limit = PART_LIMIT } = request.query
      // An offset costs a read of every transition before it: the links of the parts name positions instead.
      if (offset > 0) {
        fromRequest(['query'], () => {
          throw new InputError(['offset'], 'is no longer read: a part of the history starts `after` the position the `Link` of the part before gives')
        })
      }
      const position = after === undefined ? null : fromRequest(['query'], () => decodeHistoryAfter(after, event_no))
      // Held as a window report is: one of the client's share while it waits for its turn and reads.
      const part = await streamedResponses.hold(reply, () =>
        windowReads.run(request.user.user_id, () => store.traces.historyPage(event_no, position, limit))
      )
      // Transitions are kept with their trace, so only a first part without any needs the second read.
      if (position === null && part.transitions.length === 0 && (await store.traces.find(event_no)) === null) {
        throw notFound(`No trace and no transition is known for event ${event_no}.`)
      }
      const next = part.next === null ? null : `${fastify.prefix}/history/${event_no}?after=${encodeHistoryAfter(event_no, part.next)}&limit=${limit}`
      describePart(reply, { next })
      return { event_no, transitions: part.transitions }
    }
  )
}

export default history
