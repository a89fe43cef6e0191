import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { FeedTransition } from '../../domain/records.js'
import type { TransitionFeed } from '../../store/port.js'
import { FeedHub, type FeedHubOptions, type FeedListener, type ItemFeed } from './feed-hub.js'
import { StreamFanOut, type ItemPlace } from './stream-fan-out.js'
import type { VerdictChange } from '../../../schemas/audit.js'

export { POLL_INTERVAL_MS } from './feed-hub.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Every transition written through any instance sharing the store, fanned out to this process's live streams. */
    transitionHub: StreamFanOut
    /** Every verdict change recorded through any instance sharing the store (writes, passed deadlines), likewise. */
    verdictHub: StreamFanOut<VerdictChange>
  }
}

/**
 * A verdict change is at the sites its event asks for now and at those it left, so that a stream
 * filtered by a site hears an event leave it. An event that left the audit without saying which
 * sites it asked (a change recorded by an older version) is at every site: a filtered page that
 * does not show it ignores the change.
 */
export const verdictPlace =
  (sites: readonly string[]) =>
  (change: VerdictChange): ItemPlace => {
    const asked = change.audit?.sites ?? []
    if (change.left_sites !== undefined) return { eventNo: change.event_no, sites: [...asked, ...change.left_sites] }
    return { eventNo: change.event_no, sites: change.audit === null ? sites : asked }
  }

export type TransitionListener = FeedListener<FeedTransition>
export type TransitionHubOptions = FeedHubOptions

/** The hub of the transition feed (see FeedHub). */
export class TransitionHub extends FeedHub<FeedTransition> {
  constructor(feed: TransitionFeed, log: FastifyBaseLogger, options: TransitionHubOptions = {}) {
    const items: ItemFeed<FeedTransition> = {
      position: () => feed.position(),
      since: async (position, limit) => {
        const page = await feed.since(position, limit)
        return { items: page.transitions, position: page.position }
      }
    }
    super(items, log, 'transitions', options)
  }
}

async function transitionHub(fastify: FastifyInstance, options: TransitionHubOptions) {
  const hub = new TransitionHub(fastify.store.transitions, fastify.log, options)
  const unwritable = (items: string, skipped: () => number) => (item: { event_no?: unknown }, error: unknown) =>
    fastify.log.error({ err: error, event_no: item.event_no }, `live streams: skipped one of the ${items} that cannot be written (${skipped()} so far); the rest of its page is sent`)
  const fanOut: StreamFanOut = new StreamFanOut(
    hub,
    (error) => fastify.log.error({ err: error }, 'live streams: a stream failed to take transitions'),
    undefined,
    unwritable('transitions', () => fanOut.unwritable)
  )
  fastify.decorate('transitionHub', fanOut)
  const verdictHub = new FeedHub(fastify.store.verdictChanges, fastify.log, 'verdict changes', options)
  const verdictFanOut: StreamFanOut<VerdictChange> = new StreamFanOut(
    verdictHub,
    (error) => fastify.log.error({ err: error }, 'live streams: a stream failed to take verdict changes'),
    verdictPlace(fastify.config.TRACER_SITES.names),
    unwritable('verdict changes', () => verdictFanOut.unwritable)
  )
  fastify.decorate('verdictHub', verdictFanOut)
  fastify.addHook('onClose', async () => {
    hub.close()
    verdictHub.close()
  })
}

export default fp(transitionHub, {
  name: 'transition-hub',
  fastify: '5.x',
  decorators: { fastify: ['store', 'config'] }
})
