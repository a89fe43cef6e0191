import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify'

const isEventStream = (reply: FastifyReply) => String(reply.getHeader('content-type') ?? '').startsWith('text/event-stream')

// Fastify's two `info` lines a request were most of a cheap probe's cost: here `debug`, a failed request an error, a slow one (but an
// event stream, long by design) a warning, at any level.
export class RequestLogController extends LogController {
  readonly #slowMs: number

  constructor({ slowMs }: { slowMs: number }) {
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

const requestBindings = Symbol('request bindings')

type RequestLogger = FastifyBaseLogger & { [requestBindings]?: Record<string, unknown> }

// The request id bound per line, by the mixin: pino runs the redaction over a new child's bindings, and most requests write no line.
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
