import type { Db, Document } from 'mongodb'
import type { VerdictChange } from '../../../schemas/audit.js'
import type { FeedTransition } from '../../domain/records.js'
import type { FeedPage } from '../port.js'
import { ChangeReader } from './change-reader.js'
import { FeedBuffer } from './feed-buffer.js'
import { HISTORY_FIELD, toFeedTransition } from './history-summary.js'
import { COLLECTIONS } from './indexes.js'
import { recordReads } from './record-writes.js'

/** Items kept for readers: a few minutes of a busy pipeline, a few MB. */
const FEED_CAPACITY = 10_000
/** How long the server holds a caught-up read of a stream: what a caught-up `since` costs beyond its round trip. */
const CAUGHT_UP_WAIT_MS = 25
/** Changes taken in one catch-up at most: a flood of writes never holds a reader; the next call goes on. */
const CHANGES_PER_CATCH_UP = 1_000

/**
 * A change stream read on demand: each call first takes what the stream has (writes acknowledged before it are there),
 * then serves positions, local to this instance, from a bounded buffer; it reopens a failed stream.
 */
class ChangeFeed<T> {
  private readonly buffer = new FeedBuffer<T>(FEED_CAPACITY)
  private reading: Promise<void> | undefined
  private nextReading: Promise<void> | undefined

  constructor(
    private readonly reader: ChangeReader,
    private readonly itemsIn: (change: Document) => T[]
  ) {}

  async position(): Promise<number> {
    await this.catchUp()
    return this.buffer.last
  }

  /** Ends the change stream (its server cursor with it); a later call would open a new one. */
  close = (): Promise<void> => this.reader.close()

  protected async page(position: number, limit: number): Promise<{ items: T[]; position: number }> {
    await this.catchUp()
    return this.buffer.page(position, limit)
  }

  /** One read of the stream at a time; a caller during one waits for the next, shared: the one under way may have passed where the caller's writes landed. */
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
    const reading = this.reader
      .read(CHANGES_PER_CATCH_UP, (change) => {
        for (const item of this.itemsIn(change)) this.buffer.add(item)
      })
      .finally(() => {
        if (this.reading === reading) this.reading = undefined
      })
    this.reading = reading
    return reading
  }
}

/** Of the `trace` stream, inserts, updates (not replacements: bulk imports, whose history is not new) and invalidations; only their history. */
const FEED_PIPELINE: Document[] = [
  { $match: { operationType: { $in: ['insert', 'update', 'invalidate'] } } },
  { $project: { operationType: 1, [`fullDocument.${HISTORY_FIELD}`]: 1, 'updateDescription.updatedFields': 1 } }
]

/** `transitions.12`, as an update reports a `$push` onto an existing array. */
const PUSHED = new RegExp(`^${HISTORY_FIELD}\\.(\\d+)$`)

const lastOf = (history: unknown): unknown[] => (Array.isArray(history) && history.length > 0 ? [history[history.length - 1]] : [])

/**
 * The transitions one change added, in the order written. Each write of this service pushes one, so of a whole
 * history (set first, or a new document) only the last is new: a trace copied in does not add all its past.
 */
export function transitionsIn(change: Document): FeedTransition[] {
  let added: unknown[] = []
  if (change.operationType === 'insert') added = lastOf((change.fullDocument as Document | undefined)?.[HISTORY_FIELD])
  if (change.operationType === 'update') {
    const fields = ((change.updateDescription as Document | undefined)?.updatedFields ?? {}) as Document
    const pushed: [number, unknown][] = []
    for (const [path, value] of Object.entries(fields)) {
      if (path === HISTORY_FIELD) added.push(...lastOf(value))
      const index = PUSHED.exec(path)?.[1]
      if (index !== undefined) pushed.push([Number(index), value])
    }
    added.push(...pushed.sort(([a], [b]) => a - b).map(([, value]) => value))
  }
  return added.map(toFeedTransition).filter((transition) => transition !== null)
}

/** The transition feed: the `trace` collection's stream, which has every transition any instance writes, in oplog order. */
export class MongoTransitionFeed extends ChangeFeed<FeedTransition> {
  constructor(db: Db) {
    super(new ChangeReader(recordReads(db, COLLECTIONS.trace), FEED_PIPELINE, CAUGHT_UP_WAIT_MS, 'The transition feed'), transitionsIn)
  }

  async since(position: number, limit: number): Promise<FeedPage> {
    const { items, position: last } = await this.page(position, limit)
    return { transitions: items, position: last }
  }
}

/** Of the `audit` collection's stream, the writes that recorded a verdict change, and invalidations. */
const VERDICT_PIPELINE: Document[] = [
  {
    $match: {
      $or: [
        { operationType: 'invalidate' },
        { operationType: 'insert', 'fullDocument.change': { $exists: true } },
        { operationType: 'update', 'updateDescription.updatedFields.change': { $exists: true } }
      ]
    }
  },
  { $project: { operationType: 1, 'fullDocument.change': 1, 'updateDescription.updatedFields.change': 1 } }
]

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value)

/** The `value` of the whole `change` field a write set (kept-documents.ts); anything else (another program's write) is skipped. */
function verdictChangesIn(change: Document): VerdictChange[] {
  const recorded: unknown =
    change.operationType === 'insert'
      ? (change.fullDocument as Document | undefined)?.change
      : ((change.updateDescription as Document | undefined)?.updatedFields as Document | undefined)?.change
  if (!isObject(recorded) || !isObject(recorded.value) || typeof recorded.value.event_no !== 'number') return []
  return [recorded.value as VerdictChange]
}

/** The verdict feed: each change is set in the same single-document update as its look, so the stream has it once, in order. */
export class MongoVerdictFeed extends ChangeFeed<VerdictChange> {
  constructor(db: Db) {
    super(new ChangeReader(db.collection(COLLECTIONS.audit), VERDICT_PIPELINE, CAUGHT_UP_WAIT_MS, 'The verdict feed'), verdictChangesIn)
  }

  since(position: number, limit: number): Promise<{ items: VerdictChange[]; position: number }> {
    return this.page(position, limit)
  }
}
