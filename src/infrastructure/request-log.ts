import { LogController, type FastifyReply, type FastifyRequest } from 'fastify'

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
