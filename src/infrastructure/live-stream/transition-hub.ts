import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { FeedTransition } from '../../domain/records.js'
import type { TransitionFeed } from '../../store/port.js'
import { FeedHub, type FeedHubOptions, type FeedListener, type ItemFeed } from './feed-hub.js'
import { StreamFanOut, type ItemPlace } from './stream-fan-out.js'
import type { VerdictChange } from '../../../schemas/audit.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Every transition written through any instance sharing the store, fanned out to this process's live streams. */
    transitionHub: StreamFanOut
    /** Every verdict change recorded through any instance sharing the store (writes, passed deadlines), likewise. */
    verdictHub: StreamFanOut<VerdictChange>
  }
}

// At the sites its event asks for and those it left (a filtered stream hears it leave); at every site when it does not say (an older version's).
export const verdictPlace =
  (sites: readonly string[]) =>
  (change: VerdictChange): ItemPlace => {
    const asked = change.audit?.sites ?? []
    if (change.left_sites !== undefined) return { eventNo: change.event_no, sites: [...asked, ...change.left_sites] }
    return { eventNo: change.event_no, sites: change.audit === null ? sites : asked }
  }

export type TransitionListener = FeedListener<FeedTransition>
export type TransitionHubOptions = FeedHubOptions

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
  const { log } = fastify
  const fanOut = <T extends { event_no: number }>(hub: FeedHub<T>, items: string, placeOf?: (item: T) => ItemPlace) => {
    const failed = (error: unknown) => log.error({ err: error }, `live streams: a stream failed to take ${items}`)
    const streams: StreamFanOut<T> = new StreamFanOut(hub, failed, placeOf, (item, error) =>
      log.error({ err: error, event_no: item.event_no }, `live streams: skipped one of the ${items} that cannot be written (${streams.unwritable} so far); the rest of its page is sent`)
    )
    return streams
  }
  const hub = new TransitionHub(fastify.store.transitions, log, options)
  const verdictHub = new FeedHub(fastify.store.verdictChanges, log, 'verdict changes', options)
  fastify.decorate('transitionHub', fanOut(hub, 'transitions'))
  fastify.decorate('verdictHub', fanOut(verdictHub, 'verdict changes', verdictPlace(fastify.config.TRACER_SITES.names)))
  fastify.addHook('onClose', async () => {
    hub.close()
    verdictHub.close()
  })
}

export default fp(transitionHub, { name: 'transition-hub', fastify: '5.x', decorators: { fastify: ['store', 'config'] } })
