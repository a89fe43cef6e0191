import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { COLLECTIONS } from '../../src/store/mongodb/indexes.js'
import { MongoRecordWrites, recordReads, type RecordWriter } from '../../src/store/mongodb/record-writes.js'
import { duplicateKeyError, MingoEngine } from './mingo/engine.js'

const MONGODB_ADAPTER = join(import.meta.dirname, '../../../src/store/mongodb')
const WRAPPER = 'record-writes.ts'
/** The collections a file other than the wrapper may get with `db.collection`: none of them holds records. */
const NOT_RECORDS = new Set(['COLLECTIONS.users', 'COLLECTIONS.audit', 'INSTANCES_COLLECTION'])
/** indexes.ts gets every collection to create its indexes, and writes none (checked below). */
const INDEXES = { file: 'indexes.ts', argument: 'COLLECTIONS[name]' }
const GETS_A_COLLECTION = /\.collection\s*(?:<[^>(]*>)?\(\s*([^)]*?)\s*\)/g
const DRIVER_WRITE =
  /\.(insertOne|insertMany|updateOne|updateMany|replaceOne|bulkWrite|deleteOne|deleteMany|findOneAndUpdate|findOneAndReplace|findOneAndDelete|drop|rename)\s*(?:<[^>(]*>)?\(/g
/** What marks a file as one that reads or writes records: it must then make no write of the driver's at all. */
const NAMES_RECORDS = /COLLECTIONS\.(?:events|trace|datatrail|heartbeats)\b|\brecordReads\b|\bRecordWriter\b|\bRecordReads\b/

t.test('no file of the MongoDB adapter writes a record collection but through MongoRecordWrites, which keeps the audit', async (t) => {
  const files = readdirSync(MONGODB_ADAPTER).filter((name) => name.endsWith('.ts'))
  t.ok(files.length > 20, `${files.length} files read`)
  const violations: string[] = []
  let throughTheWrapper = 0
  for (const file of files) {
    if (file === WRAPPER) continue
    const text = readFileSync(join(MONGODB_ADAPTER, file), 'utf8')
    // Only the wrapper gets a record collection from the database; the others read through recordReads, typed without writes.
    for (const [, argument] of text.matchAll(GETS_A_COLLECTION)) {
      const allowed = NOT_RECORDS.has(argument!) || (file === INDEXES.file && argument === INDEXES.argument)
      if (!allowed) violations.push(`${file}: gets the collection ${argument}`)
    }
    // A file that has anything to do with records makes no write of the driver's: its writes go through a RecordWriter.
    const writes = [...text.matchAll(DRIVER_WRITE)].map(([, method]) => method)
    if ((NAMES_RECORDS.test(text) || file === INDEXES.file) && writes.length > 0) violations.push(`${file}: calls ${writes.join(', ')}`)
    throughTheWrapper += [...text.matchAll(/\bwriter\.(bulk|update)\(/g)].length
  }
  t.strictSame(violations, [], 'every record write is made through MongoRecordWrites')
  t.ok(throughTheWrapper >= 7, `${throughTheWrapper} record writes are (events, trace, datatrail, heartbeats)`)
  const wrapper = readFileSync(join(MONGODB_ADAPTER, WRAPPER), 'utf8')
  t.match(wrapper, /private readonly collections/, 'and the wrapper keeps its collections to itself')
})

t.test('a record writer keeps the audits of the events its work wrote, once the work is done, and refuses to write after', async (t) => {
  const engine = new MingoEngine()
  const kept: number[][] = []
  const records = new MongoRecordWrites(engine.db, { keep: async (eventNos) => void kept.push([...eventNos]) })
  const heartbeat = (event_no: number, heartbeat_id: number) => ({ updateOne: { filter: { heartbeat_id }, update: { $setOnInsert: { event_no, heartbeat_id } }, upsert: true } })

  let leaked: RecordWriter | undefined
  const result = await records.write(async (writer) => {
    leaked = writer
    await writer.bulk(COLLECTIONS.heartbeats, [7, 8, 7], [heartbeat(7, 1), heartbeat(8, 2), heartbeat(7, 3)])
    t.strictSame(kept, [], 'nothing is kept while the work goes on')
    await writer.update(COLLECTIONS.trace, 9, { event_no: 9 }, { $set: { 'stages/a': 'complete' } }, { upsert: true })
    return 'done'
  })
  t.equal(result, 'done', 'the work’s result')
  t.strictSame(kept, [[7, 8, 9]], 'each event written, once')
  await t.rejects(leaked!.update(COLLECTIONS.trace, 9, { event_no: 9 }, { $set: { 'stages/a': 'incomplete' } }), /only inside MongoRecordWrites\.write/)
  t.match(await engine.db.collection(COLLECTIONS.trace).findOne({ event_no: 9 }), { 'stages/a': 'complete' }, 'a writer kept past its work writes nothing')

  // A failure the work catches (a heartbeat another writer stored first) still keeps; one it lets through keeps nothing.
  engine.failNext('bulkWrite', duplicateKeyError('heartbeats', { heartbeat_id: 1 }))
  await records.write(async (writer) => {
    await writer.bulk(COLLECTIONS.heartbeats, [10], [heartbeat(10, 1)]).catch(() => {})
  })
  t.strictSame(kept.at(-1), [10], 'a write whose failure the work caught')
  await t.rejects(
    records.write(async (writer) => {
      await writer.update(COLLECTIONS.trace, 11, { event_no: 11 }, { $set: { 'stages/a': 'complete' } }, { upsert: true })
      throw new Error('the work fails')
    }),
    /the work fails/
  )
  t.strictSame(kept.at(-1), [10], 'a work that fails keeps nothing')

  const reads = recordReads(engine.db, COLLECTIONS.trace)
  // @ts-expect-error A record collection got anywhere but in the wrapper has no write in its type.
  t.equal(typeof reads.updateOne, 'function', 'it is the driver’s collection, with its type narrowed to reads')
})
