import type { FastifyInstance, FastifyReply } from 'fastify'
import fp from 'fastify-plugin'
import { Socket } from 'node:net'
import { finished } from 'node:stream'
import { serviceUnavailable } from '../app-error.js'
import { send as sendError } from './error-handler.js'
import { PulledBody } from './pulled-body.js'
import { ResponseSlots } from './response-slots.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** How every route that streams its body sends it: bounded, paced by the client, never stalled for long. */
    streamedResponses: StreamedResponses
  }
}

export interface StreamOptions {
  /** The bound this response counts against; the service-wide MAX_STREAMED_RESPONSES unless given. */
  slots?: ResponseSlots
  /**
   * An open-ended body (an event stream): each fragment is sent as soon as it is made, and the body
   * ends cleanly when the server closes. A finite one (a JSON document) is sent in chunks of a few
   * KiB, and left to finish when the server closes if its client reads (a client that does not is
   * dropped within a second, so it cannot hold up shutdown).
   */
  openEnded?: boolean
  /**
   * Aborted by the source when its client has fallen further behind than the source will buffer
   * (an event stream's queue is full): the client is disconnected at once, as a stalled one is,
   * and the signal's reason is logged.
   */
  dropped?: AbortSignal
}

export interface StreamedResponses {
  /** MAX_STREAMED_RESPONSES: the bulk documents (baseband callbacks, the audit) in flight at once. */
  readonly documents: ResponseSlots
  /**
   * Sends `fragments` (text, produced on demand) as the body of `reply`. Takes a slot first: when
   * none is free, rejects with 503 and Retry-After before any byte is sent. The source's first
   * fragment is read before the status too, so a source that fails at once (an unavailable store)
   * rejects with its error. Then the body is produced only as fast as the client reads it, and a
   * client that takes nothing for STREAM_STALL_TIMEOUT_S is disconnected. The slot is given back
   * when the response is sent, fails, is aborted, or is dropped.
   */
  send(reply: FastifyReply, fragments: AsyncIterable<string>, options?: StreamOptions): Promise<FastifyReply>
}

/**
 * Seconds a refused client should wait. A year's window streams in about a second to a client that
 * reads, so a slot usually frees within that; a retry costs the service little.
 */
export const RETRY_AFTER_S = 2

/** While the server closes, a client that takes nothing for this long is dropped, so shutdown does not wait out the stall timeout. */
const CLOSING_STALL_MS = 1000

interface OpenResponse {
  body: PulledBody
  openEnded: boolean
}

async function streamedResponses(fastify: FastifyInstance) {
  const { config } = fastify
  const stallMs = config.STREAM_STALL_TIMEOUT_S * 1000
  const documents = new ResponseSlots('responses', config.MAX_STREAMED_RESPONSES)
  const open = new Set<OpenResponse>()
  let closing = false

  fastify.addHook('preClose', async () => {
    closing = true
    for (const { body, openEnded } of open) {
      if (openEnded) body.endEarly()
      body.stallAfter(CLOSING_STALL_MS)
    }
  })

  async function send(reply: FastifyReply, fragments: AsyncIterable<string>, options: StreamOptions = {}) {
    const slots = options.slots ?? documents
    const release = slots.take()
    if (release === null) {
      // Answered here rather than thrown: a full house is expected under load, not a failure to log with a stack.
      reply.log.warn(`refused a response: already streaming ${slots.limit} ${slots.name}`)
      reply.header('retry-after', String(RETRY_AFTER_S))
      return sendError(
        reply,
        serviceUnavailable(`This instance is already streaming ${slots.limit} ${slots.name}, the most it serves at once; try again shortly.`)
      )
    }
    const source = fragments[Symbol.asyncIterator]()
    let first: IteratorResult<string>
    try {
      first = await source.next()
    } catch (error) {
      release()
      throw error
    }
    const body = new PulledBody(source, first, {
      prompt: options.openEnded,
      stallMs: closing ? CLOSING_STALL_MS : stallMs,
      onStall: () => {
        drop(reply, 'its client stopped reading')
        body.destroy()
      }
    })
    const response: OpenResponse = { body, openEnded: options.openEnded === true }
    open.add(response)
    if (closing && response.openEnded) body.endEarly()
    const { dropped } = options
    const onDropped = () => {
      drop(reply, String(dropped?.reason))
      body.destroy()
    }
    dropped?.addEventListener('abort', onDropped, { once: true })
    whenOver(reply, body, () => {
      dropped?.removeEventListener('abort', onDropped)
      open.delete(response)
      release()
    })
    const sent = reply.send(body)
    if (dropped?.aborted === true) onDropped()
    return sent
  }

  fastify.decorate('streamedResponses', { documents, send })
}

/** Disconnects the client of a response it is not taking, saying why in the log. */
function drop(reply: FastifyReply, why: string) {
  reply.log.info(`ended a streamed response: ${why}`)
  const socket = reply.raw.socket
  // A reset also discards what the kernel still holds for a client that will never read it;
  // a plain close would keep trying to deliver that first.
  if (socket instanceof Socket) socket.resetAndDestroy()
  else reply.raw.destroy()
}

/**
 * Calls `over` once, when the response was handed to the kernel, failed, or its client left (also
 * while the first fragment was read), or when the body was destroyed (a stalled client, a source
 * that failed); the body is destroyed then too. Until then, each drain of the socket is progress.
 */
function whenOver(reply: FastifyReply, body: PulledBody, over: () => void) {
  let done = false
  const end = () => {
    if (done) return
    done = true
    body.destroy()
    over()
  }
  reply.raw.on('drain', () => body.progressed())
  finished(reply.raw, end)
  body.once('close', end)
}

export default fp(streamedResponses, {
  name: 'streamed-responses',
  fastify: '5.x',
  decorators: { fastify: ['config'] },
  dependencies: ['error-handler']
})
