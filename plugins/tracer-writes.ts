import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errorResponses, ref, StatusTrueSchema, tokenRoute } from '../schemas/common.js'
import { DatatrailMemberSchema, datatrailParamsSchema } from '../schemas/datatrail.js'
import { heartbeatBatchSchema } from '../schemas/heartbeats.js'
import { createTraceRequestSchema, updateTraceRequestSchema } from '../schemas/trace.js'
import { updatedKey } from '../src/domain/trace.js'
import { fromRequest } from '../src/infrastructure/http/request-input.js'
import { CLASSIFICATION_STAGE } from '../src/vocabulary.js'

/** What the Python trace updater expects of every write. */
const STORED = { status: true } as const

/** The pipeline's writes (CONTRACT section 6): the role is checked before the body is read, so a reader gets 403 whatever it sends. */
const tracerWrites: FastifyPluginAsyncTypebox = async (fastify) => {
  const { store, config, clock } = fastify
  const sites = config.TRACER_SITES
  /** As the pipeline stores write times: seconds, a float. */
  const nowSeconds = () => clock() / 1000
  fastify.addHook('onRequest', fastify.requireRole('writer'))

  /** What every write route documents alike: its group, token, answer and errors. */
  const write = (documentation: { operationId: string; summary: string; description: string }) => ({
    ...tokenRoute('tracer'),
    ...documentation,
    response: { 200: ref(StatusTrueSchema, { description: 'Stored; it survives a crash of the server.' }), ...errorResponses(400, 401, 403, 413, 415, 503) }
  })

  fastify.post(
    '/create-trace',
    {
      schema: {
        ...write({
          operationId: 'createTrace',
          summary: 'Create the trace of an event with every stage incomplete; harmless when it exists',
          description: 'Every stage of every configured site starts `incomplete`; a trace that exists is left as it is. `site` must be a configured site and has no other effect.'
        }),
        body: ref(createTraceRequestSchema(sites))
      }
    },
    async ({ body }) => {
      await store.traces.create(body.event, nowSeconds())
      return STORED
    }
  )

  fastify.post(
    '/update-trace',
    {
      schema: {
        ...write({
          operationId: 'updateTrace',
          summary: 'Set the status of one stage at one site, creating the trace when missing',
          description: `Atomic: concurrent updates of different keys never lose one. Stage ${CLASSIFICATION_STAGE} has no site.`
        }),
        body: ref(updateTraceRequestSchema(sites))
      }
    },
    async ({ body, user }) => {
      const key = fromRequest(['body'], () => updatedKey(body.stage, body.site, sites))
      await store.traces.setStatus(body.event, key, body.status, nowSeconds(), user.user_id)
      return STORED
    }
  )

  fastify.put(
    '/datatrail/:event_no/:member',
    {
      schema: {
        ...write({
          operationId: 'putDatatrail',
          summary: 'Replace one datatrail member of an event (the event need not exist yet)',
          description: 'The body is the member with all six fields; it replaces what was stored for that member of the event.'
        }),
        params: datatrailParamsSchema(sites),
        body: ref(DatatrailMemberSchema)
      }
    },
    async ({ params: { event_no, member }, body }) => {
      await store.datatrail.put([{ event_no, member, value: body, update_timestamp: nowSeconds() }])
      return STORED
    }
  )

  fastify.post(
    '/heartbeats',
    {
      schema: {
        ...write({
          operationId: 'addHeartbeats',
          summary: 'Store heartbeat records; a heartbeat_id already stored is left as it is',
          description: 'A JSON array of 1 to 1000 heartbeat records, each naming its event. Repeating a heartbeat_id is a harmless no-op, so a sender may retry a whole batch.'
        }),
        body: heartbeatBatchSchema(sites)
      }
    },
    async ({ body }) => {
      await store.heartbeats.add(body, nowSeconds())
      return STORED
    }
  )
}

export default tracerWrites
