import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { Socket } from 'node:net'
import { finished } from 'node:stream'
import type { AccessClaims } from '../../../schemas/auth.js'
import { AppError, serviceUnavailable } from '../../app-error.js'
import { send as sendError } from '../http/error-handler.js'
import { LinkedSet } from './linked-set.js'
import { PulledBody, type BodyFragment } from './pulled-body.js'
import { ResponseSlots, type SlotHolder, type SlotRefusal } from './response-slots.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** How every route that streams its body sends it: bounded, paced by the client, never stalled for long. */
    streamedResponses: StreamedResponses
  }
}

export interface StreamOptions {
  /** MAX_STREAMED_RESPONSES' `documents` unless given. */
  slots?: ResponseSlots
  /** An event stream: each fragment sent when made, ended when the server closes; a finite body goes in chunks and may finish if read. */
  openEnded?: boolean
  /** Aborted by the source when its client fell further behind than it will buffer: dropped at once, the reason logged. */
  dropped?: AbortSignal
}

export interface StreamedResponses {
  /** MAX_STREAMED_RESPONSES: the bulk documents and the window reports made whole, in flight at once. */
  readonly documents: ResponseSlots
  /** The slot (else 503 or 429) and the first fragment come before the status, so a failing store rejects; then paced by the client. */
  send(reply: FastifyReply, fragments: AsyncIterable<BodyFragment>, options?: StreamOptions): Promise<FastifyReply>
  /** Runs `work` (a window report made whole) holding a slot of `documents`; rejects with the refusal `send` answers. */
  hold<T>(reply: FastifyReply, work: () => Promise<T>): Promise<T>
}

/** A year's window streams in about a second to a client that reads, so a slot usually frees within that. */
const RETRY_AFTER_S = 2

/** When no slot is free, a response whose client has taken nothing for this long gives its slot up, so stalled clients cannot keep out a reading one. */
const YIELD_WHEN_STALLED_MS = 2000

/** Every streamed route authenticates; one without a token would count all its clients as one user. */
const holderOf = (request: FastifyRequest): SlotHolder => ({ user: (request.user as AccessClaims | null)?.user_id ?? '', address: request.ip })

/** While the server closes, a client that takes nothing for this long is dropped, so shutdown does not wait out the stall timeout. */
const CLOSING_STALL_MS = 1000

interface OpenResponse {
  body: PulledBody
  openEnded: boolean
  slots: ResponseSlots
  holder: SlotHolder
  reply: FastifyReply
  released: Promise<void>
}

/** 503 when the instance is full, 429 when the client has its share; logged as a warning (expected under load), with Retry-After. */
function refuse(reply: FastifyReply, slots: ResponseSlots, refused: SlotRefusal): AppError {
  reply.header('retry-after', String(RETRY_AFTER_S))
  if (refused === 'full') {
    reply.log.warn(`refused a response: already streaming ${slots.limit} ${slots.name}`)
    return serviceUnavailable(`This instance is already streaming ${slots.limit} ${slots.name}, the most it serves at once; try again shortly.`)
  }
  const share = refused === 'user' ? slots.share : slots.addressShare
  reply.log.warn(`refused a response: its ${refused} holds ${share} ${slots.name} already`)
  const who = refused === 'user' ? 'Your user' : 'Your address'
  return new AppError(429, 'TooManyRequests', [
    `${who} already holds ${share} of this instance's ${slots.name}, the most one ${refused} may hold at once; try again when one has ended.`
  ])
}

async function streamedResponses(fastify: FastifyInstance) {
  const { config } = fastify
  const stallMs = config.STREAM_STALL_TIMEOUT_S * 1000
  const documents = new ResponseSlots('responses', config.MAX_STREAMED_RESPONSES, config.MAX_STREAMED_RESPONSES_PER_CLIENT)
  const open = new LinkedSet<OpenResponse>()
  let closing = false

  /** When no slot is free, the longest stalled response gives its slot up: any when the instance is full, else one of the holder's own. */
  async function admit(slots: ResponseSlots, holder: SlotHolder): Promise<(() => void) | SlotRefusal> {
    const first = slots.take(holder)
    if ('release' in first) return first.release
    // A client at its share gets none of another's, even a stalled one: it would be refused next.
    if (first.refused === 'full' && slots.atShare(holder) !== false) return first.refused
    const { refused } = first
    const now = performance.now()
    let victim: OpenResponse | undefined
    for (const response of open) {
      if (response.slots !== slots || (refused !== 'full' && response.holder[refused] !== holder[refused])) continue
      const stalled = response.body.stalledForMs(now)
      if (stalled >= YIELD_WHEN_STALLED_MS && stalled > (victim?.body.stalledForMs(now) ?? 0)) victim = response
    }
    if (victim === undefined) return first.refused
    const ago = Math.round(victim.body.stalledForMs(now) / 1000)
    drop(victim.reply, victim.body, `its client stopped reading (${ago} s ago), and another request needed its slot`)
    await victim.released
    const second = slots.take(holder)
    return 'release' in second ? second.release : second.refused
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
      onStall: () => drop(reply, body, 'its client stopped reading')
    })
    let released = () => {}
    const openEnded = options.openEnded === true
    const response: OpenResponse = { body, openEnded, slots, holder, reply, released: new Promise<void>((resolve) => (released = resolve)) }
    const opened = open.add(response)
    if (closing && response.openEnded) body.endEarly()
    const { dropped } = options
    const onDropped = () => drop(reply, body, String(dropped?.reason))
    dropped?.addEventListener('abort', onDropped, { once: true })
    whenOver(reply, body, () => {
      dropped?.removeEventListener('abort', onDropped)
      open.delete(opened)
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
function drop(reply: FastifyReply, body: PulledBody, why: string) {
  reply.log.info(`ended a streamed response: ${why}`)
  const socket = reply.raw.socket
  // A reset also discards what the kernel holds for a client that will never read it; a close would keep trying to deliver it.
  if (socket instanceof Socket) socket.resetAndDestroy()
  else reply.raw.destroy()
  body.destroy()
}

/** Calls `over` once, when the response ends however it does, and destroys the body then; until then each drain is progress. */
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

export default fp(streamedResponses, { name: 'streamed-responses', fastify: '5.x', decorators: { fastify: ['config'] }, dependencies: ['error-handler'] })
