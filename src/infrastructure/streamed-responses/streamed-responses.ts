import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { Socket } from 'node:net'
import { finished } from 'node:stream'
import type { AccessClaims } from '../../../schemas/auth.js'
import { AppError, serviceUnavailable } from '../../app-error.js'
import { send as sendError } from '../http/error-handler.js'
import { PulledBody, type BodyFragment } from './pulled-body.js'
import { ResponseSlots, type SlotHolder, type SlotRefusal } from './response-slots.js'

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
  /**
   * MAX_STREAMED_RESPONSES: the bulk documents (baseband callbacks, the audit) and the window
   * reports made whole (stage latency) in flight at once, MAX_STREAMED_RESPONSES_PER_CLIENT of them
   * per user and twice that per client address.
   */
  readonly documents: ResponseSlots
  /**
   * Sends `fragments` (produced on demand) as the body of `reply`. Takes a slot first (see `admit`):
   * when none can be had, answers 503 or 429 with Retry-After before any byte is sent. The
   * source's first fragment is read before the status too, so a source that fails at once (an
   * unavailable store) rejects with its error. Then the body is produced only as fast as the client
   * reads it, and a client that takes nothing for STREAM_STALL_TIMEOUT_S is disconnected. The slot
   * is given back when the response is sent, fails, is aborted, or is dropped.
   */
  send(reply: FastifyReply, fragments: AsyncIterable<BodyFragment>, options?: StreamOptions): Promise<FastifyReply>
  /**
   * Runs `work` (a window report made whole before it is sent) holding a slot of `documents`; when
   * none can be had, rejects with the 503 or 429 `send` answers.
   */
  hold<T>(reply: FastifyReply, work: () => Promise<T>): Promise<T>
}

/**
 * Seconds a refused client should wait. A year's window streams in about a second to a client that
 * reads, so a slot usually frees within that; a retry costs the service little.
 */
export const RETRY_AFTER_S = 2

/**
 * When no slot is free, a response whose client has taken nothing for this long gives its slot up
 * to the new request (the client is disconnected, as a stalled one is), so clients that stopped
 * reading cannot keep out one that reads. A reading client drains its socket far more often.
 */
export const YIELD_WHEN_STALLED_MS = 2000

/**
 * The holder of a request's slots: its token's user and its address. Every streamed route of the
 * service authenticates; a route without a token would count all its clients as one user.
 */
export const holderOf = (request: FastifyRequest): SlotHolder => ({
  user: (request.user as AccessClaims | null)?.user_id ?? '',
  address: request.ip
})

/** While the server closes, a client that takes nothing for this long is dropped, so shutdown does not wait out the stall timeout. */
const CLOSING_STALL_MS = 1000

interface OpenResponse {
  body: PulledBody
  openEnded: boolean
  slots: ResponseSlots
  holder: SlotHolder
  reply: FastifyReply
  /** Settles once its slot is given back. */
  released: Promise<void>
}

/** Which open responses a refusal may take a slot from: any when all are taken, else the holder's own. */
const candidatesFor: Record<SlotRefusal, (response: OpenResponse, holder: SlotHolder) => boolean> = {
  full: () => true,
  user: (response, holder) => response.holder.user === holder.user,
  address: (response, holder) => response.holder.address === holder.address
}

/** The answer to a request that gets no slot: 503 when the instance is full, 429 when the client has its share. */
function refusal(slots: ResponseSlots, refused: SlotRefusal): AppError {
  if (refused === 'full') {
    return serviceUnavailable(`This instance is already streaming ${slots.limit} ${slots.name}, the most it serves at once; try again shortly.`)
  }
  const [who, share] = refused === 'user' ? ['Your user', slots.share] : ['Your address', slots.addressShare]
  return new AppError(429, 'TooManyRequests', [
    `${who} already holds ${share} of this instance's ${slots.name}, the most one ${refused} may hold at once; try again when one has ended.`
  ])
}

async function streamedResponses(fastify: FastifyInstance) {
  const { config } = fastify
  const stallMs = config.STREAM_STALL_TIMEOUT_S * 1000
  const documents = new ResponseSlots('responses', config.MAX_STREAMED_RESPONSES, config.MAX_STREAMED_RESPONSES_PER_CLIENT)
  const open = new Set<OpenResponse>()
  let closing = false

  /**
   * A slot of `slots` for `holder`, or why there is none. When none is free, the response that has
   * waited longest for a client that takes nothing (YIELD_WHEN_STALLED_MS at least) gives its slot
   * up: any response when the instance is full, one of the holder's own when it has its share.
   */
  async function admit(slots: ResponseSlots, holder: SlotHolder): Promise<(() => void) | SlotRefusal> {
    const first = slots.take(holder)
    if ('release' in first) return first.release
    // A client at its share gets none of another's, even a stalled one: it would be refused next.
    if (first.refused === 'full' && slots.atShare(holder) !== false) return first.refused
    const now = performance.now()
    let victim: OpenResponse | undefined
    for (const response of open) {
      if (response.slots !== slots || !candidatesFor[first.refused](response, holder)) continue
      const stalled = response.body.stalledForMs(now)
      if (stalled >= YIELD_WHEN_STALLED_MS && stalled > (victim?.body.stalledForMs(now) ?? 0)) victim = response
    }
    if (victim === undefined) return first.refused
    drop(victim.reply, `its client stopped reading (${Math.round(victim.body.stalledForMs(now) / 1000)} s ago), and another request needed its slot`)
    victim.body.destroy()
    await victim.released
    const second = slots.take(holder)
    return 'release' in second ? second.release : second.refused
  }

  /** The refusal, said in the log (a full house is expected under load: a warning, not an error) and answered after Retry-After. */
  function refuse(reply: FastifyReply, slots: ResponseSlots, refused: SlotRefusal): AppError {
    const why =
      refused === 'full' ? `already streaming ${slots.limit} ${slots.name}` : `its ${refused} holds ${refused === 'user' ? slots.share : slots.addressShare} ${slots.name} already`
    reply.log.warn(`refused a response: ${why}`)
    reply.header('retry-after', String(RETRY_AFTER_S))
    return refusal(slots, refused)
  }

  fastify.addHook('preClose', async () => {
    closing = true
    for (const { body, openEnded } of open) {
      if (openEnded) body.endEarly()
      body.stallAfter(CLOSING_STALL_MS)
    }
  })

  async function send(reply: FastifyReply, fragments: AsyncIterable<BodyFragment>, options: StreamOptions = {}) {
    const slots = options.slots ?? documents
    const holder = holderOf(reply.request)
    const release = await admit(slots, holder)
    // Answered here rather than thrown: a full house is expected under load, not a failure to log with a stack.
    if (typeof release !== 'function') return sendError(reply, refuse(reply, slots, release))
    const source = fragments[Symbol.asyncIterator]()
    let first: IteratorResult<BodyFragment>
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
    let released = () => {}
    const response: OpenResponse = {
      body,
      openEnded: options.openEnded === true,
      slots,
      holder,
      reply,
      released: new Promise<void>((resolve) => (released = resolve))
    }
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
      released()
    })
    const sent = reply.send(body)
    if (dropped?.aborted === true) onDropped()
    return sent
  }

  async function hold<T>(reply: FastifyReply, work: () => Promise<T>): Promise<T> {
    const release = await admit(documents, holderOf(reply.request))
    if (typeof release !== 'function') throw refuse(reply, documents, release)
    try {
      return await work()
    } finally {
      release()
    }
  }

  fastify.decorate('streamedResponses', { documents, send, hold })
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
