import type { Db, Document } from 'mongodb'
import type { VerdictChange } from '../../../schemas/audit.js'
import type { Adapter } from '../guarded-store.js'
import type { VerdictFeed } from '../port.js'
import { ChangeFeed } from './change-feed.js'
import { ChangeReader } from './change-reader.js'
import { CAUGHT_UP_WAIT_MS, FEED_CAPACITY } from './feed.js'
import { COLLECTIONS } from './indexes.js'

/**
 * What the verdict feed asks of the `audit` collection's change stream: the writes that recorded a
 * change (an insert whose document has one, an update that set one), and invalidations. The server
 * drops everything else of each change but the resume token (`_id`): the facts and look written with
 * it stay there.
 */
export const VERDICT_PIPELINE: Document[] = [
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

/**
 * The verdict change one change event recorded: the `value` of the `change` the write set (see
 * audit-documents.ts). The adapter writes every change as a whole `change` field; anything else
 * (another program's write) is skipped.
 */
export function verdictChangesIn(change: Document): VerdictChange[] {
  const recorded: unknown =
    change.operationType === 'insert'
      ? (change.fullDocument as Document | undefined)?.change
      : ((change.updateDescription as Document | undefined)?.updatedFields as Document | undefined)?.change
  if (!isObject(recorded) || !isObject(recorded.value) || typeof recorded.value.event_no !== 'number') return []
  return [recorded.value as VerdictChange]
}

/**
 * The verdict feed on MongoDB, as the transition feed (feed.ts) over the `trace` collection: the
 * `audit` collection's change stream, opened on first use and read on demand, with a reader and a
 * buffer of its own. Every change any instance records is set in the same single-document update
 * as the look it comes from, so the stream delivers each once, in the order written.
 */
export class MongoVerdictFeed implements Adapter<VerdictFeed> {
  private readonly feed

  constructor(db: Db) {
    const reader = new ChangeReader(db.collection(COLLECTIONS.audit), VERDICT_PIPELINE, CAUGHT_UP_WAIT_MS, 'The verdict feed')
    this.feed = new ChangeFeed(reader, verdictChangesIn, FEED_CAPACITY)
  }

  position(): Promise<number> {
    return this.feed.position()
  }

  since(position: number, limit: number): Promise<{ items: VerdictChange[]; position: number }> {
    return this.feed.since(position, limit)
  }

  close(): Promise<void> {
    return this.feed.close()
  }
}
