import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errorResponse, errorResponses, ref, tokenRoute } from '../schemas/common.js'
import { StreamedTransitionSchema } from '../schemas/history.js'
import { streamQuerySchema, TransitionMessageSchema, verdictMessageSchema, verdictsMessageSchema } from '../schemas/stream.js'
import { verdictChangeSchema, type VerdictChange } from '../schemas/audit.js'
import { Type } from '@sinclair/typebox'
import type { FeedTransition } from '../src/domain/records.js'
import { EventStreamSource, sseComment, sseMessage, type StreamFragment } from '../src/infrastructure/live-stream/event-stream.js'
import { ResponseSlots } from '../src/infrastructure/streamed-responses/response-slots.js'
import { VerdictBacklog } from '../src/infrastructure/live-stream/verdict-backlog.js'

/** Shorter in tests: keep-alive comments every 15 s, well inside the idle timeouts of proxies (30 to 60 s), and BACKLOG_BYTES. */
export interface TraceStreamOptions {
  keepAliveMs?: number
  backlogBytes?: number
}

/** Messages held for a client not taking them (shared between streams): one more transition drops it, one more verdict change folds. */
const QUEUE_LIMIT = 1000
/** Folded verdict changes a stream may hold before it is dropped: each event's latest change once, some 60,000 at about 1 KiB. */
const BACKLOG_BYTES = 64 * 1024 * 1024

const OPENING = sseComment('stream open')
const KEEP_ALIVE = sseComment('keep-alive')

/** The live trace stream, from the process's hubs, which read the store: the writes of every instance sharing it arrive. */
const traceStream: FastifyPluginAsyncTypebox<TraceStreamOptions> = async (fastify, options) => {
  const { config, streamedResponses, transitionHub, verdictHub } = fastify
  const { keepAliveMs = 15_000, backlogBytes = BACKLOG_BYTES } = options
  const slots = new ResponseSlots('live streams', config.MAX_STREAMS, config.MAX_STREAMS_PER_CLIENT)
  const transitionSchema = ref(StreamedTransitionSchema)
  const verdictSchema = ref(verdictChangeSchema(config.TRACER_SITES))
  /** Serialisers compiled for the first stream that needs them; a verdict change's JSON is made once for every stream. */
  let message: ((transition: FeedTransition) => string) | undefined
  let verdictData: ((change: VerdictChange) => string) | undefined
  const verdictMessage = (change: VerdictChange) => sseMessage('verdict', verdictData!(change))

  fastify.get(
    '/stream',
    {
      schema: {
        ...tokenRoute('tracer'),
        operationId: 'streamTransitions',
        summary: 'Live stream of trace transitions, as server-sent events',
        description:
          'Every transition (a change of a stored trace value) written through update-trace by any instance sharing the store, ' +
          'and with `verdicts=true` every change of an event’s audit verdict (`event: verdict`, VerdictChange), including stages that turn stuck as their deadline passes, ' +
          'within 2 s of its write, for as long as the connection stays open: from when the stream opens on, with no replay of earlier ones. ' +
          `A client more than ${QUEUE_LIMIT} messages behind (a burst: a deadline passing for thousands of events at once) gets the verdict changes that came meanwhile ` +
          'folded into `event: verdicts` messages, each naming up to 500 events once with its latest change, instead of one message per change: a client that reads keeps its stream through any burst. ' +
          '`event_no` and `site` filter; both given, both apply. A comment line every 15 s keeps proxies from closing a quiet stream. ' +
          `At most MAX_STREAMS (${config.MAX_STREAMS}) streams are open at once per instance (503 beyond), and MAX_STREAMS_PER_CLIENT ` +
          `(${config.MAX_STREAMS_PER_CLIENT}) per user and per client address (429 beyond). ` +
          `A client that falls ${QUEUE_LIMIT} transitions, or ${Math.round(backlogBytes / 2 ** 20)} MiB of folded verdict changes, behind, or takes nothing for STREAM_STALL_TIMEOUT_S seconds while messages wait, is disconnected. ` +
          'An access token that expires while its stream is open does not end it. When the service shuts down, the stream ends cleanly.',
        querystring: streamQuerySchema(config.TRACER_SITES),
        response: {
          200: {
            description:
              'The stream; it ends only when the client or the service closes it. The status, the headers and a `: stream open` comment ' +
              'leave at once, before any transition. A proxy in front must pass the stream through unbuffered, as the response asks ' +
              '(`Cache-Control: no-cache, no-transform`, `X-Accel-Buffering: no`); a proxy that reads whole responses before passing ' +
              'them on (a validating proxy such as Prism) holds the stream until it ends.',
            content: {
              'text/event-stream': {
                schema: Type.Union([TransitionMessageSchema, verdictMessageSchema(config.TRACER_SITES), verdictsMessageSchema(config.TRACER_SITES)], {
                  description: 'A transition message; with `verdicts=true`, also verdict messages, and verdicts messages for a client that fell behind.'
                })
              }
            }
          },
          ...errorResponses(400, 401),
          429: errorResponse(
            429,
            'TooManyRequests: the user or the client address holds MAX_STREAMS_PER_CLIENT streams of this instance already; wait `Retry-After` seconds.'
          ),
          503: errorResponse(503, 'ServiceUnavailable: MAX_STREAMS streams are open in this instance already, or the store is unreachable; wait `Retry-After` seconds.')
        }
      }
    },
    async (request, reply) => {
      const { event_no: eventNo, site, verdicts = false } = request.query
      if (message === undefined) {
        const serialize = reply.compileSerializationSchema(transitionSchema) as (transition: FeedTransition) => string
        message = (transition) => sseMessage('transition', serialize(transition))
      }
      if (verdicts && verdictData === undefined) {
        const serialize = reply.compileSerializationSchema(verdictSchema) as (change: VerdictChange) => string
        // Keyed by the change: the hub reads each once and hands the same object to every stream.
        const made = new WeakMap<VerdictChange, string>()
        verdictData = (change) => {
          let data = made.get(change)
          if (data === undefined) made.set(change, (data = serialize(change)))
          return data
        }
      }
      const format = message

      const dropped = new AbortController()
      const offer = (fragment: StreamFragment, messages = 1) => {
        if (!stream.push(fragment, messages)) dropped.abort(`its client fell ${QUEUE_LIMIT} messages behind`)
      }
      const offerVerdicts = (fragment: StreamFragment, messages: number, changes: readonly VerdictChange[]) => {
        if (!stream.pushFoldable(fragment, messages, changes)) dropped.abort(`its client fell ${Math.round(backlogBytes / 2 ** 20)} MiB of verdict changes behind`)
      }
      const stream = new EventStreamSource<VerdictChange>({
        opening: OPENING,
        limit: QUEUE_LIMIT,
        ...(verdicts ? { backlog: new VerdictBacklog(verdictData!), backlogBytes } : {}),
        // Started when the stream's slot is taken; resolves once the hub knows where the store's feed stands.
        start: async () => {
          const stopListening = await transitionHub.subscribe({ eventNo, site }, offer, format)
          let stopVerdicts = () => {}
          try {
            if (verdicts) stopVerdicts = await verdictHub.subscribe({ eventNo, site }, offerVerdicts, verdictMessage)
          } catch (error) {
            stopListening()
            throw error
          }
          const keepAlive = setInterval(() => offer(KEEP_ALIVE), keepAliveMs)
          return () => {
            stopListening()
            stopVerdicts()
            clearInterval(keepAlive)
          }
        }
      })
      // No proxy may hold the messages back or compress them (which buffers): nginx reads
      // X-Accel-Buffering, the others Cache-Control.
      reply.type('text/event-stream; charset=utf-8').header('cache-control', 'no-cache, no-transform').header('x-accel-buffering', 'no')
      return streamedResponses.send(reply, stream, { slots, openEnded: true, dropped: dropped.signal })
    }
  )
}

export default traceStream
