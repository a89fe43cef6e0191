import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ErrorEnvelopeSchema, errorResponses, EventNoParamsSchema, ref, tokenRoute } from '../schemas/common.js'
import { TraceHistorySchema } from '../schemas/history.js'
import { notFound } from '../src/app-error.js'
import { eventNoFromPath } from '../src/domain/event-no.js'
import { fromRequest } from '../src/infrastructure/request-input.js'

/** One trace's recorded changes. */
const history: FastifyPluginAsyncTypebox = async (fastify) => {
  const { store } = fastify

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
          'programs are not recorded. 404 when the event has neither a trace nor a transition.',
        params: EventNoParamsSchema,
        response: {
          200: ref(TraceHistorySchema, { description: 'The recorded transitions.' }),
          ...errorResponses(400, 401, 503),
          404: ref(ErrorEnvelopeSchema, { description: 'NotFound: the event has neither a trace nor a recorded transition.' })
        }
      }
    },
    async (request) => {
      const event_no = fromRequest(['path'], () => eventNoFromPath(request.params.event_no))
      const transitions = await store.traces.history(event_no)
      // Transitions are kept with their trace, so only an event without any needs the second read.
      if (transitions.length === 0 && (await store.traces.find(event_no)) === null) {
        throw notFound(`No trace and no transition is known for event ${event_no}.`)
      }
      return { event_no, transitions }
    }
  )
}

export default history
