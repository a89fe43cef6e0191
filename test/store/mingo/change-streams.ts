import { MongoAPIError, type Document } from 'mongodb'
import { Aggregator } from 'mingo'
import { copyOf, serverError } from './values.js'

/** Stages a change stream's pipeline may have here; the server allows a few more. */
const STAGES = new Set(['$match', '$project'])
const OPTIONS = new Set(['maxAwaitTimeMS', 'resumeAfter', 'startAfter'])

const sameValue = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/**
 * What an update event says changed, as the server says it for the adapter's updates: each new or
 * changed top-level field, except that elements appended to an array are named one by one
 * (`transitions.3`), as a `$push` is reported. A nested change is reported as its whole top-level
 * field (the server would name the nested path); removed fields are listed.
 */
export function describeUpdate(before: Document, after: Document): Document {
  const updatedFields: Document = {}
  for (const [field, value] of Object.entries(after)) {
    const old: unknown = before[field]
    if (sameValue(old, value)) continue
    const appended = Array.isArray(old) && Array.isArray(value) && value.length > old.length && old.every((item, i) => sameValue(item, value[i]))
    if (appended) value.slice(old.length).forEach((item, i) => (updatedFields[`${field}.${old.length + i}`] = item))
    else updatedFields[field] = value
  }
  const removedFields = Object.keys(before).filter((field) => !(field in after))
  return { updatedFields, removedFields, truncatedArrays: [] }
}

/** The token of the point after `sequence` events (0: before the first). */
const tokenOf = (sequence: number) => ({ _data: sequence.toString(16).padStart(16, '0') })
const sequenceOf = (token: unknown): number => {
  const data = (token as { _data?: unknown } | null)?._data
  if (typeof data !== 'string' || !/^[0-9a-f]{16}$/.test(data)) throw serverError(260, 'InvalidResumeToken', 'Invalid resume token')
  return parseInt(data, 16)
}

/**
 * The change events of one collection in the order written (its slice of an oplog), and the change
 * streams reading them. An emulation of what the adapter uses: the events of its own writes, resume
 * tokens, `resumeAfter`, a pipeline of `$match` and `$project`, and `tryNext`, which answers null
 * once a stream has read everything (a server would wait `maxAwaitTimeMS` first).
 */
export class ChangeLog {
  private readonly events: Document[] = []

  constructor(private readonly namespace: { db: string; coll: string }) {}

  record(change: Document): void {
    this.events.push({ _id: tokenOf(this.events.length + 1), ...copyOf(change), ns: this.namespace })
  }

  /** The collection was dropped or renamed: every stream gets `invalidate`, then ends. */
  invalidate(): void {
    this.events.push({ _id: tokenOf(this.events.length + 1), operationType: 'invalidate' })
  }

  watch(pipeline: Document[], options: Document, gate: (method: string) => void): MingoChangeStream {
    const unknownOptions = Object.keys(options).filter((option) => !OPTIONS.has(option))
    if (unknownOptions.length > 0) throw new Error(`The mingo engine does not support the change stream options ${unknownOptions.join(', ')}`)
    for (const stage of pipeline) {
      const name = Object.keys(stage)[0]!
      if (!STAGES.has(name)) throw new Error(`The mingo engine does not support the change stream stage ${name}`)
    }
    if (options.resumeAfter !== undefined && options.startAfter !== undefined) throw new Error('Only one of resumeAfter and startAfter')
    const start = options.startAfter === undefined ? { after: options.resumeAfter as unknown, pastInvalidation: false } : { after: options.startAfter as unknown, pastInvalidation: true }
    return new MingoChangeStream(this.events, new Aggregator(pipeline), start, gate)
  }
}

/**
 * One change stream. Like the driver's it opens on the first `tryNext` (the aggregate fixes where it
 * starts: the engine's gate sees `watch`, then `getMore` for each later read), and an error closes it, as the driver closes a stream once its own resume attempt failed:
 * the caller opens a new one with the last resume token.
 */
export class MingoChangeStream {
  /** Events read so far; undefined until opened. */
  private read: number | undefined
  private closed = false
  private token: unknown

  constructor(
    private readonly events: readonly Document[],
    private readonly pipeline: Aggregator,
    /** The token to go on after, and whether it may be an invalidation (`startAfter`). */
    private readonly start: { after: unknown; pastInvalidation: boolean },
    private readonly gate: (method: string) => void
  ) {
    this.token = start.after
  }

  get resumeToken(): unknown {
    return this.token
  }

  async tryNext(): Promise<Document | null> {
    if (this.closed) throw new MongoAPIError('ChangeStream is closed')
    try {
      if (this.read === undefined) {
        this.gate('watch')
        this.read = this.startingPoint()
      } else {
        this.gate('getMore')
      }
      while (this.read < this.events.length) {
        const event = this.events[this.read++]!
        this.token = event._id
        if (event.operationType === 'invalidate') this.closed = true
        const [passed] = this.pipeline.run([copyOf(event)])
        if (passed !== undefined) return passed
      }
      // An empty batch: the server's postBatchResumeToken, the point read up to.
      this.token = tokenOf(this.read)
      return null
    } catch (error) {
      this.closed = true
      throw error
    }
  }

  async close(): Promise<void> {
    this.closed = true
  }

  private startingPoint(): number {
    if (this.start.after === undefined) return this.events.length
    const after = sequenceOf(this.start.after)
    if (after === 0) return 0
    const event = this.events[after - 1]
    if (event === undefined) throw serverError(280, 'ChangeStreamFatalError', 'cannot resume stream; the resume token was not found')
    if (event.operationType === 'invalidate' && !this.start.pastInvalidation) {
      throw serverError(260, 'InvalidResumeToken', 'Attempting to resume a change stream using resumeAfter after an invalidate; use startAfter')
    }
    return after
  }
}
