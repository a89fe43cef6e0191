import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errorResponses, windowReportRefusals, ref, tokenRoute } from '../schemas/common.js'
import { stageLatencyReportSchema } from '../schemas/stage-latency.js'
import { CallbackQuerySchema } from '../schemas/trace.js'
import { requiredWindow } from '../src/domain/time-window.js'
import { fromRequest } from '../src/infrastructure/http/request-input.js'
import { stageLatencyReport } from '../src/reports/stage-latency.js'

/** How long each stage takes, from the recorded transitions of a window's events. */
const stageLatency: FastifyPluginAsyncTypebox = async (fastify) => {
  const { store, config, streamedResponses, windowReads } = fastify
  const sites = config.TRACER_SITES

  fastify.get(
    '/stage-latency',
    {
      schema: {
        ...tokenRoute('audit'),
        operationId: 'getStageLatency',
        summary: 'How long each stage takes at each site, over the baseband events of a window',
        description:
          'Over the events of baseband-callbacks for the window (`start_time_utc <= time < end_time_utc`): per stage and ' +
          'requested site, the keys complete and incomplete now, and the latency from the event to the first recorded ' +
          'transition of the key to `complete` (nearest-rank p50 and p95, and the longest). A key completed without a ' +
          'recorded transition is counted but not timed; the percentiles are null when nothing was timed.',
        querystring: CallbackQuerySchema,
        response: {
          200: ref(stageLatencyReportSchema(sites), { description: 'One row per stage and requested site.' }),
          ...errorResponses(400, 401),
          ...windowReportRefusals
        }
      }
    },
    async (request, reply) => {
      const window = fromRequest(['query'], () => requiredWindow(request.query, config.MAX_WINDOW_DAYS))
      // Made whole before it is sent: it holds a slot of the window reports while it is made.
      const turn = () => windowReads.turn(request.user.user_id)
      return streamedResponses.hold(reply, () => stageLatencyReport(store, window, sites, turn))
    }
  )
}

export default stageLatency
