import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { errorResponses, EventNoParamsSchema, ref, tokenRoute } from '../schemas/common.js'
import {
  EventBatchRequestSchema,
  eventInputSchema,
  eventPageSchema,
  EventQuerySchema,
  eventSchema,
  eventsByNumberSchema,
  UpsertResultSchema
} from '../schemas/events.js'
import { decodeCursor, encodeCursor } from '../src/domain/cursor.js'
import { eventOutput, toEventRecord } from '../src/domain/events.js'
import { eventJson } from '../src/domain/output-forms.js'
import { parseStrictJson, utf8Text } from '../src/domain/strict-json.js'
import type { EventPageQuery } from '../src/domain/records.js'
import { DAY_MS, optionalWindow } from '../src/domain/time-window.js'
import { badRequest, notFound } from '../src/app-error.js'
import { sendJsonText } from '../src/infrastructure/streamed-responses/json-text.js'
import { fromRequest } from '../src/infrastructure/http/request-input.js'

/** The event list: keyset pages, one event, several by number, and batch upserts (JSON array or NDJSON). */
const events: FastifyPluginAsyncTypebox = async (fastify) => {
  const { store, config, windowReads } = fastify
  const sites = config.TRACER_SITES
  fastify.addHook('onRequest', fastify.authenticate)

  // NDJSON: one record a line, each read as strictly as JSON bodies are (see strict-json.ts).
  fastify.addContentTypeParser('application/x-ndjson', { parseAs: 'buffer' }, (_request, body, done) => {
    const records: unknown[] = []
    try {
      const lines = fromRequest(['body'], () => utf8Text(body as Buffer)).split('\n')
      for (const [index, line] of lines.entries()) {
        if (line.trim() === '') continue
        try {
          records.push(fromRequest(['body', records.length], () => parseStrictJson(line)))
        } catch (error) {
          if (error instanceof SyntaxError) return done(badRequest(`body line ${index + 1} is not valid JSON`), undefined)
          throw error
        }
      }
    } catch (error) {
      return done(error as Error, undefined)
    }
    done(null, records)
  })

  fastify.get(
    '/',
    {
      prefixTrailingSlash: 'no-slash',
      schema: {
        ...tokenRoute('events'),
        operationId: 'listEvents',
        summary: 'Events of a window, newest first by default, in keyset pages',
        description: 'A page costs the same at any depth. Follow `next_cursor` until it is null.',
        querystring: EventQuerySchema,
        response: { 200: ref(eventPageSchema(sites), { description: 'One page of events.' }), ...errorResponses(400, 401, 503) }
      }
    },
    async ({ query }, reply) => {
      const limit = query.limit ?? 100
      const pageQuery: EventPageQuery =
        query.cursor === undefined
          ? {
              window: fromRequest(['query'], () => optionalWindow(query, config.MAX_WINDOW_DAYS, fastify.clock())),
              order: query.order ?? 'desc',
              limit,
              minSnr: query.min_snr,
              maxSnr: query.max_snr,
              knownSourceName: query.known_source_name,
              basebandRequested: query.baseband_requested
            }
          : fromRequest(['query'], () => decodeCursor(query.cursor!, limit, config.MAX_WINDOW_DAYS * DAY_MS))
      // One row more than asked tells whether another page follows.
      const rows = await store.events.page({ ...pageQuery, limit: limit + 1 })
      const page = rows.slice(0, limit)
      const nextCursor = rows.length > limit ? encodeCursor(pageQuery, page[page.length - 1]!.position) : null
      // The events come as JSON text in the form the 200 schema documents; a string is sent as it is.
      return sendJsonText(reply, `{"events":[${page.map((row) => row.json).join(',')}],"next_cursor":${JSON.stringify(nextCursor)}}`)
    }
  )

  fastify.get(
    '/:event_no',
    {
      schema: {
        ...tokenRoute('events'),
        operationId: 'getEvent',
        summary: 'One event',
        description: 'The event as stored: `dm` is null and `tsar_classification` is `unclassified` when unknown.',
        params: EventNoParamsSchema,
        response: { 200: ref(eventSchema(sites), { description: 'The event.' }), ...errorResponses(400, 401, 404, 503) }
      }
    },
    async ({ params: { event_no } }) => {
      const event = await store.events.find(event_no)
      if (event === null) throw notFound(`No event ${event_no}.`)
      return eventOutput(event, sites)
    }
  )

  fastify.post(
    '/get_events',
    {
      schema: {
        ...tokenRoute('events'),
        operationId: 'getEvents',
        summary: 'Several events by number, in the order asked',
        description:
          'The batch read of the CHIME/FRB Python client, `Events.get_event([n, ...])`: a read, sent as POST for its body, ' +
          'so any authenticated user may make it. The answer is an object keyed by event number (in decimal), holding the events ' +
          'found in the order asked, each once; an unknown number is left out (`{}` when none is known). The client asks in chunks ' +
          'of 300 and merges the answers into one `dict`.',
        body: ref(EventBatchRequestSchema),
        response: { 200: ref(eventsByNumberSchema(sites), { description: 'The events found.' }), ...errorResponses(400, 401, 413, 415, 503) }
      }
    },
    async (request, reply) => {
      const { event_ids } = request.body
      // Up to a thousand events read and written out: a turn of the expensive reads' queue, as a page of a report.
      const text = await windowReads.run(request.user.user_id, async () => {
        const found = new Map((await store.events.findMany(event_ids)).map((event) => [event.event_no, event]))
        // Made as text: an object puts integer-like keys in ascending order, not in the order asked.
        const members = [...new Set(event_ids)].flatMap((eventNo) => {
          const event = found.get(eventNo)
          return event === undefined ? [] : [`"${eventNo}":${eventJson(event, sites)}`]
        })
        return `{${members.join(',')}}`
      })
      return sendJsonText(reply, text)
    }
  )

  fastify.post(
    '/',
    {
      prefixTrailingSlash: 'no-slash',
      onRequest: fastify.requireRole('writer'),
      schema: {
        ...tokenRoute('events'),
        operationId: 'upsertEvents',
        summary: 'Insert or replace up to 1000 events in one transaction',
        description:
          'A JSON array, or NDJSON with `Content-Type: application/x-ndjson`. One bad record refuses the whole ' +
          'batch with 400 naming its index.',
        // Documents both media types; the one body schema validates whichever was sent.
        consumes: ['application/json', 'application/x-ndjson'],
        body: Type.Array(ref(eventInputSchema(sites)), { minItems: 1, maxItems: 1000 }),
        response: {
          200: ref(UpsertResultSchema, { description: 'All stored; they survive a crash of the server.' }),
          ...errorResponses(400, 401, 403, 413, 415, 503)
        }
      }
    },
    async ({ body }) => {
      const now = fastify.clock() / 1000
      const records = body.map((input, index) => fromRequest(['body', index], () => toEventRecord(input, sites, now)))
      return { upserted: await store.events.upsert(records) }
    }
  )
}

export default events
