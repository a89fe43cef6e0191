import { MongoServerError, type ChangeStream, type ChangeStreamOptions, type Collection, type Db, type Document, type ResumeToken } from 'mongodb'
import type { Adapter } from '../guarded-store.js'
import { StoreUnavailableError, type FeedPage, type TransitionFeed } from '../port.js'
import { FEED_PIPELINE, transitionsIn } from './change-events.js'
import { TransitionBuffer } from './feed-buffer.js'
import { COLLECTIONS } from './indexes.js'

/** Transitions kept for readers: a few minutes of a busy pipeline, a few MB. */
export const FEED_CAPACITY = 10_000
/**
 * How long the server holds a read of a change stream that has nothing new before it answers so:
 * the time a caught-up `since` costs beyond its round trip.
 */
export const CAUGHT_UP_WAIT_MS = 25
/** Changes taken in one catch-up at most: a flood of writes never holds a reader; the next call goes on. */
const CHANGES_PER_CATCH_UP = 1_000

/** `$changeStream` on a server that is not a replica set (nor a sharded cluster). */
const NOT_A_REPLICA_SET = 40573
/** The stream cannot go on from its resume token: history lost from the oplog, token unknown or invalid. */
const CANNOT_RESUME = new Set([260, 280, 286])

/**
 * The transition feed on MongoDB: the `trace` collection's change stream, which delivers every
 * transition any instance writes (each is part of a trace document's update), in the order of the
 * oplog. It is opened on first use and read on demand: each call first takes what the stream has
 * (writes acknowledged by a majority before the call are there), numbers it locally and keeps it in
 * a bounded buffer, from which positions are served. A stream that fails is reopened by the next
 * call from the last resume token, so nothing is lost or repeated; meanwhile calls reject with
 * StoreUnavailableError, as they do on a server that is not a replica set (which has no change
 * streams) rather than waiting.
 */
export class MongoTransitionFeed implements Adapter<TransitionFeed> {
  private readonly traces: Collection
  private readonly buffer = new TransitionBuffer(FEED_CAPACITY)
  private stream: ChangeStream<Document, Document> | undefined
  /**
   * Where a new stream goes on: after the last change taken (`resumeAfter`), or after an
   * invalidation (`startAfter`, the only way past one). None before the first stream.
   */
  private resumeFrom: { resumeAfter: ResumeToken } | { startAfter: ResumeToken } | undefined
  private reading: Promise<void> | undefined
  private nextReading: Promise<void> | undefined

  constructor(db: Db) {
    this.traces = db.collection(COLLECTIONS.trace)
  }

  async position(): Promise<number> {
    await this.catchUp()
    return this.buffer.last
  }

  async since(position: number, limit: number): Promise<FeedPage> {
    await this.catchUp()
    return this.buffer.after(position, limit)
  }

  /** Ends the change stream (its server cursor with it); a later call would open a new one. */
  async close(): Promise<void> {
    const stream = this.stream
    this.stream = undefined
    await stream?.close()
  }

  /**
   * One read of the stream at a time. A caller that comes while one is under way waits for the next,
   * which starts after it and is shared by every such caller: the one under way may have passed the
   * point where the caller's own writes were acknowledged.
   */
  private catchUp(): Promise<void> {
    if (this.reading === undefined) return this.read()
    this.nextReading ??= this.reading
      .catch(() => {})
      .then(() => {
        this.nextReading = undefined
        return this.read()
      })
    return this.nextReading
  }

  private read(): Promise<void> {
    const reading = this.takeChanges().finally(() => {
      if (this.reading === reading) this.reading = undefined
    })
    this.reading = reading
    return reading
  }

  private async takeChanges(): Promise<void> {
    const stream = this.stream ?? this.open()
    let invalidation: ResumeToken
    try {
      for (let taken = 0; taken < CHANGES_PER_CATCH_UP; taken++) {
        const change = await stream.tryNext()
        if (change?.operationType === 'invalidate') {
          invalidation = change._id
          break
        }
        // After a change, or an empty batch: the server's token for the point read up to.
        if (stream.resumeToken != null) this.resumeFrom = { resumeAfter: stream.resumeToken }
        if (change === null) return
        for (const transition of transitionsIn(change)) this.buffer.add(transition)
      }
    } catch (error) {
      this.discard(stream)
      throw this.explained(error)
    }
    if (invalidation !== undefined) {
      // The trace collection was dropped or renamed: this stream has ended for good. The next goes
      // on from just after the invalidation, so the writes that recreate the collection are not missed.
      this.resumeFrom = { startAfter: invalidation }
      this.discard(stream)
      return this.takeChanges()
    }
  }

  /** A stream that failed or ended: closed (its server cursor too), and replaced by the next call. */
  private discard(stream: ChangeStream<Document, Document>): void {
    if (this.stream === stream) this.stream = undefined
    stream.close().catch(() => {})
  }

  private open(): ChangeStream<Document, Document> {
    const options: ChangeStreamOptions = { maxAwaitTimeMS: CAUGHT_UP_WAIT_MS, ...this.resumeFrom }
    this.stream = this.traces.watch<Document, Document>(FEED_PIPELINE, options)
    return this.stream
  }

  private explained(error: unknown): unknown {
    if (!(error instanceof MongoServerError)) return error
    const code = Number(error.code)
    if (code === NOT_A_REPLICA_SET) {
      return new StoreUnavailableError('The transition feed reads a MongoDB change stream, which only a replica set has', { cause: error })
    }
    if (CANNOT_RESUME.has(code) && this.resumeFrom !== undefined) {
      this.resumeFrom = undefined
      return new StoreUnavailableError('The transition feed could not resume its change stream; it starts again from now', { cause: error })
    }
    return error
  }
}
