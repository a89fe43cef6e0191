import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify'

interface RequestLogOptions {
  /** A request that took longer is logged as a warning. */
  slowMs: number
}

const isEventStream = (reply: FastifyReply) => String(reply.getHeader('content-type') ?? '').startsWith('text/event-stream')

/**
 * Fastify's request log at the levels a busy service needs. Fastify writes two `info` lines a
 * request, which for a probe as cheap as a token check are most of its cost and of the log. Here
 * both lines are `debug`, a failed request (5xx but 503, or an error while sending) is an error and one
 * slower than SLOW_REQUEST_MS a warning with its time, at any level. An event stream is long by
 * design, so its length is not slowness. A request whose line is below the level costs a level
 * check, nothing more.
 */
export class RequestLogController extends LogController {
  readonly #slowMs: number

  constructor({ slowMs }: RequestLogOptions) {
    super()
    this.#slowMs = slowMs
  }

  override incomingRequest(request: FastifyRequest): void {
    request.log.debug({ req: request }, 'incoming request')
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const responseTime = reply.elapsedTime
    if (error) reply.log.error({ res: reply, err: error, responseTime }, 'request errored')
    else if (reply.statusCode >= 500 && reply.statusCode !== 503) reply.log.error({ res: reply, responseTime }, 'request completed')
    else if (responseTime >= this.#slowMs && !isEventStream(reply)) reply.log.warn({ req: request, res: reply, responseTime }, 'slow request')
    else reply.log.debug({ res: reply, responseTime }, 'request completed')
  }
}

/** Where a request's logger keeps the bindings Fastify gives it (the request id). */
const requestBindings = Symbol('request bindings')

type RequestLogger = FastifyBaseLogger & { [requestBindings]?: Record<string, unknown> }

/**
 * Each request's logger gets its bindings when it writes a line, from the mixin, rather than when
 * it is made: pino runs the redaction's wildcard paths over every binding of a new child, and most
 * requests write no line. The lines are the same, the request id placed where the binding was.
 */
export const requestLoggers: {
  childLoggerFactory: NonNullable<FastifyServerOptions['childLoggerFactory']>
  mixin: (object: object, level: number, logger: RequestLogger) => object
} = {
  childLoggerFactory(logger, bindings, options) {
    const child: RequestLogger = logger.child({}, options)
    child[requestBindings] = bindings
    return child
  },
  // A new object each time: pino merges the line's own fields into it.
  mixin: (_object, _level, logger) => ({ ...logger[requestBindings] })
}
