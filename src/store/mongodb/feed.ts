import type { Db } from 'mongodb'
import type { Adapter } from '../guarded-store.js'
import type { FeedPage, TransitionFeed } from '../port.js'
import { FEED_PIPELINE, transitionsIn } from './change-events.js'
import { ChangeFeed } from './change-feed.js'
import { ChangeReader } from './change-reader.js'
import { COLLECTIONS } from './indexes.js'
import { recordReads } from './record-writes.js'

/** Transitions kept for readers: a few minutes of a busy pipeline, a few MB. */
export const FEED_CAPACITY = 10_000
/**
 * How long the server holds a read of a change stream that has nothing new before it answers so:
 * the time a caught-up `since` costs beyond its round trip.
 */
export const CAUGHT_UP_WAIT_MS = 25

/**
 * The transition feed on MongoDB: the `trace` collection's change stream, which delivers every
 * transition any instance writes (each is part of a trace document's update), in the order of the
 * oplog. It is opened on first use and read on demand (see ChangeFeed): positions are local to this
 * instance. A stream that fails is reopened by the next call from the last resume token, so nothing
 * is lost or repeated; meanwhile calls reject with StoreUnavailableError, as they do on a server
 * that is not a replica set (which has no change streams) rather than waiting.
 */
export class MongoTransitionFeed implements Adapter<TransitionFeed> {
  private readonly feed

  constructor(db: Db) {
    const reader = new ChangeReader(recordReads(db, COLLECTIONS.trace), FEED_PIPELINE, CAUGHT_UP_WAIT_MS, 'The transition feed')
    this.feed = new ChangeFeed(reader, transitionsIn, FEED_CAPACITY)
  }

  position(): Promise<number> {
    return this.feed.position()
  }

  async since(position: number, limit: number): Promise<FeedPage> {
    const { items, position: last } = await this.feed.since(position, limit)
    return { transitions: items, position: last }
  }

  /** Ends the change stream (its server cursor with it); a later call would open a new one. */
  close(): Promise<void> {
    return this.feed.close()
  }
}
