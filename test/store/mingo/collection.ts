import { ObjectId, type AnyBulkWriteOperation, type Document, type Filter, type IndexDescription } from 'mongodb'
import { Query } from 'mingo'
import { ChangeLog, describeUpdate, type MingoChangeStream } from './change-streams.js'
import { Indexes } from './indexes.js'
import { applyUpdate, checkReplacement, checkUpdate, upsertSeed } from './updates.js'
import { copyOf, serverError } from './values.js'

/** Called first by every operation: throws what the engine is told to (database away, closed, ...). */
export type Gate = (method: string) => void

interface FindOptions {
  sort?: Record<string, 1 | -1>
  limit?: number
  projection?: Document
}

interface WriteResult {
  matchedCount: number
  modifiedCount: number
  upsertedCount: number
  upsertedId: ObjectId | null
}

const sameValue = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)
/** The server counts a document as modified only when its content changed. */
const changed = (before: Document, after: Document) => !sameValue(before, after)

const rejectOptions = (given: object | undefined, known: string[]) => {
  const unknown = Object.keys(given ?? {}).filter((option) => !known.includes(option))
  if (unknown.length > 0) throw new Error(`The mingo engine does not support the options ${unknown.join(', ')}`)
}

/**
 * One collection: documents in insertion order, queried with mingo. Exactly the methods and
 * options the adapter calls; anything else throws rather than pretending.
 */
export class MingoCollection {
  private documents: Document[] = []
  private readonly indexes: Indexes
  /** Every write's change event, for change streams. */
  readonly changes: ChangeLog

  constructor(
    namespace: string,
    private readonly gate: Gate
  ) {
    this.indexes = new Indexes(namespace)
    const [db = '', coll = ''] = namespace.split(/\.(.*)/)
    this.changes = new ChangeLog({ db, coll })
  }

  /** Whether a server would list this collection: it has a document or an index. */
  get exists(): boolean {
    return this.documents.length > 0 || this.indexes.any
  }

  /** Lazy like the driver's cursor: nothing runs, and nothing fails, before toArray. */
  find(filter: Filter<Document>, options?: FindOptions) {
    rejectOptions(options, ['sort', 'limit', 'projection'])
    return {
      toArray: async () => {
        this.gate('find')
        return this.select(filter, options)
      }
    }
  }

  async findOne(filter: Filter<Document>, options?: Pick<FindOptions, 'projection'>): Promise<Document | null> {
    rejectOptions(options, ['projection'])
    this.gate('findOne')
    return this.select(filter, { ...options, limit: 1 })[0] ?? null
  }

  async countDocuments(filter: Filter<Document>): Promise<number> {
    this.gate('countDocuments')
    return this.matching(filter).length
  }

  async estimatedDocumentCount(): Promise<number> {
    this.gate('estimatedDocumentCount')
    return this.matching({}).length
  }

  /** Like the driver, gives the caller's document an `_id` when it has none. */
  async insertOne(document: Document) {
    this.gate('insertOne')
    document._id ??= new ObjectId()
    this.insertNew(copyOf(document))
    return { acknowledged: true, insertedId: document._id }
  }

  async updateOne(filter: Filter<Document>, update: Document, options?: { upsert?: boolean }) {
    rejectOptions(options, ['upsert'])
    this.gate('updateOne')
    return { acknowledged: true, ...this.update(filter, update, options?.upsert === true) }
  }

  async deleteOne(filter: Filter<Document>) {
    this.gate('deleteOne')
    const [target] = this.matching(filter)
    if (target !== undefined) {
      this.documents = this.documents.filter((document) => document !== target)
      this.changes.record({ operationType: 'delete', documentKey: { _id: target._id } })
    }
    return { acknowledged: true, deletedCount: target === undefined ? 0 : 1 }
  }

  /** Applies the operations in order and stops at the first error (the server would go on when unordered). */
  async bulkWrite(operations: AnyBulkWriteOperation[], options?: { ordered?: boolean }) {
    rejectOptions(options, ['ordered'])
    this.gate('bulkWrite')
    if (operations.length === 0) throw new Error('Invalid BulkOperation, Batch cannot be empty')
    const totals = { matchedCount: 0, modifiedCount: 0, upsertedCount: 0, upsertedIds: {} as Record<number, ObjectId> }
    operations.forEach((operation, at) => {
      let result: WriteResult
      if ('replaceOne' in operation) {
        const { filter, replacement, upsert, ...rest } = operation.replaceOne
        rejectOptions(rest, [])
        result = this.replace(filter, replacement, upsert === true)
      } else if ('updateOne' in operation) {
        const { filter, update, upsert, ...rest } = operation.updateOne
        rejectOptions(rest, [])
        result = this.update(filter, update, upsert === true)
      } else {
        throw new Error(`The mingo engine does not support the bulk operation ${Object.keys(operation).join(', ')}`)
      }
      totals.matchedCount += result.matchedCount
      totals.modifiedCount += result.modifiedCount
      totals.upsertedCount += result.upsertedCount
      if (result.upsertedId !== null) totals.upsertedIds[at] = result.upsertedId
    })
    return { ok: 1, insertedCount: 0, deletedCount: 0, insertedIds: {}, ...totals }
  }

  /** Like the driver's, contacts no server: the stream opens on its first read. */
  watch(pipeline: Document[] = [], options: Document = {}): MingoChangeStream {
    return this.changes.watch(pipeline, options, this.gate)
  }

  async createIndexes(descriptions: IndexDescription[]): Promise<string[]> {
    this.gate('createIndexes')
    return this.indexes.create(descriptions, this.documents)
  }

  private matching(filter: Filter<Document>): Document[] {
    const query = new Query(filter)
    return this.documents.filter((document) => query.test(document))
  }

  private select(filter: Filter<Document>, options: FindOptions = {}): Document[] {
    let cursor = new Query(filter).find(this.documents, options.projection)
    if (options.sort !== undefined) cursor = cursor.sort(options.sort)
    if (options.limit !== undefined && options.limit > 0) cursor = cursor.limit(options.limit)
    return cursor.all().map((document) => copyOf(document as Document))
  }

  private update(filter: Filter<Document>, update: Document, upsert: boolean): WriteResult {
    checkUpdate(update)
    const [target] = this.matching(filter)
    if (target !== undefined) {
      const updated = applyUpdate(target, update, false)
      this.store(updated, this.documents.indexOf(target))
      // As on a server, a write that changes nothing leaves no trace in the oplog, so no event.
      if (!changed(target, updated)) return { matchedCount: 1, modifiedCount: 0, upsertedCount: 0, upsertedId: null }
      this.changes.record({ operationType: 'update', documentKey: { _id: target._id }, updateDescription: describeUpdate(target, updated) })
      return { matchedCount: 1, modifiedCount: 1, upsertedCount: 0, upsertedId: null }
    }
    if (!upsert) return { matchedCount: 0, modifiedCount: 0, upsertedCount: 0, upsertedId: null }
    return this.insertNew(applyUpdate(upsertSeed(filter), update, true))
  }

  private replace(filter: Filter<Document>, replacement: Document, upsert: boolean): WriteResult {
    checkReplacement(replacement)
    const [target] = this.matching(filter)
    if (target !== undefined) {
      if (replacement._id !== undefined && !sameValue(replacement._id, target._id)) {
        throw serverError(66, 'ImmutableField', "Performing an update on the path '_id' would modify the immutable field '_id'")
      }
      const replaced = { ...copyOf(replacement), _id: target._id }
      this.store(replaced, this.documents.indexOf(target))
      if (!changed(target, replaced)) return { matchedCount: 1, modifiedCount: 0, upsertedCount: 0, upsertedId: null }
      this.changes.record({ operationType: 'replace', documentKey: { _id: target._id }, fullDocument: replaced })
      return { matchedCount: 1, modifiedCount: 1, upsertedCount: 0, upsertedId: null }
    }
    if (!upsert) return { matchedCount: 0, modifiedCount: 0, upsertedCount: 0, upsertedId: null }
    return this.insertNew(copyOf(replacement))
  }

  private insertNew(document: Document): WriteResult {
    document._id ??= new ObjectId()
    this.store(document, this.documents.length)
    this.changes.record({ operationType: 'insert', documentKey: { _id: document._id }, fullDocument: document })
    return { matchedCount: 0, modifiedCount: 0, upsertedCount: 1, upsertedId: document._id }
  }

  /** Puts `document` at `position` (the end for a new one) once every unique index accepts it. */
  private store(document: Document, position: number): void {
    this.indexes.checkAll(document, this.documents, position)
    this.documents[position] = document
  }
}
