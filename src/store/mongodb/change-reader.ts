import { MongoServerError, type ChangeStream, type Collection, type Document, type ResumeToken } from 'mongodb'
import { StoreUnavailableError } from '../port.js'

const NOT_A_REPLICA_SET = 40573
/** History lost from the oplog, token unknown or invalid. */
const CANNOT_RESUME = new Set([260, 280, 286])

/**
 * One collection's change stream, read on demand from the resume token of the point read up to: a failed stream is
 * closed and the next read goes on from that token, losing or repeating nothing. Reads reject with
 * StoreUnavailableError on a server with no change streams (no replica set) and when the stream cannot resume (then
 * from now).
 */
export class ChangeReader {
  private stream: ChangeStream<Document, Document> | undefined
  /** Where a new stream goes on: after the last change taken, or after an invalidation (`startAfter`, the only way past one). */
  private resumeFrom: { resumeAfter: ResumeToken } | { startAfter: ResumeToken } | undefined

  /** `pipeline` must let `invalidate` through; `name` says whose stream it is in errors ("The transition feed"). */
  constructor(
    private readonly collection: Pick<Collection, 'watch'>,
    private readonly pipeline: Document[],
    private readonly maxAwaitTimeMS: number,
    private readonly name: string
  ) {}

  /** Hands at most `max` changes to `take`, in the order written; one handed over counts as taken even when the read then fails. */
  async read(max: number, take: (change: Document) => void): Promise<void> {
    const stream = (this.stream ??= this.collection.watch<Document, Document>(this.pipeline, { maxAwaitTimeMS: this.maxAwaitTimeMS, ...this.resumeFrom }))
    let invalidation: ResumeToken
    try {
      for (let taken = 0; taken < max; taken++) {
        const change = await stream.tryNext()
        if (change?.operationType === 'invalidate') {
          invalidation = change._id
          break
        }
        // After a change, or an empty batch: the server's token for the point read up to.
        if (stream.resumeToken != null) this.resumeFrom = { resumeAfter: stream.resumeToken }
        if (change === null) return
        take(change)
      }
    } catch (error) {
      this.discard(stream)
      throw this.explained(error)
    }
    if (invalidation !== undefined) {
      // The collection was dropped or renamed: the next stream starts just after, so the writes that recreate it are seen.
      this.resumeFrom = { startAfter: invalidation }
      this.discard(stream)
      return this.read(max, take)
    }
  }

  async close(): Promise<void> {
    const stream = this.stream
    this.stream = undefined
    await stream?.close()
  }

  private discard(stream: ChangeStream<Document, Document>): void {
    if (this.stream === stream) this.stream = undefined
    stream.close().catch(() => {})
  }

  private explained(error: unknown): unknown {
    if (!(error instanceof MongoServerError)) return error
    const code = Number(error.code)
    if (code === NOT_A_REPLICA_SET) {
      return new StoreUnavailableError(`${this.name} reads a MongoDB change stream, which only a replica set has`, { cause: error })
    }
    if (CANNOT_RESUME.has(code) && this.resumeFrom !== undefined) {
      this.resumeFrom = undefined
      return new StoreUnavailableError(`${this.name} could not resume its change stream; it starts again from now`, { cause: error })
    }
    return error
  }
}
