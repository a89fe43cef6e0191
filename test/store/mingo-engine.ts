import { Double, Int32, Long, MongoNetworkError } from 'mongodb'
import t from 'tap'
import { MingoEngine } from './mingo/engine.js'

/** The engine is only worth its tests if it refuses what a server refuses and returns what a driver returns. */

t.test('documents come back as the driver returns them: copies, BSON numbers promoted', async (t) => {
  const engine = new MingoEngine()
  const trace = engine.collection('trace')
  const huge = Long.fromString('9007199254740993')
  await trace.insertOne({ event_no: new Int32(7), a: Long.fromNumber(2 ** 40), b: new Double(1.5), nested: { c: new Int32(3) }, huge })
  const read = await trace.findOne({ event_no: 7 }, { projection: { _id: 0 } })
  t.strictSame(read, { event_no: 7, a: 2 ** 40, b: 1.5, nested: { c: 3 }, huge })
  t.ok(read?.huge instanceof Long, 'a Long beyond 2^53 stays a Long, as with promoteLongs')
  read!.nested.c = 99
  t.equal((await trace.findOne({ event_no: 7 }))?.nested.c, 3, 'changing a result changes nothing stored')
})

t.test('a path in both $set and $setOnInsert is refused, as the server does (code 40)', async (t) => {
  const trace = new MingoEngine().collection('trace')
  const update = { $set: { 'stages/a': 'complete' }, $setOnInsert: { 'stages/a': 'incomplete' } }
  await t.rejects(trace.updateOne({ event_no: 1 }, update, { upsert: true }), { code: 40 })
  await t.rejects(trace.updateOne({ event_no: 1 }, { $inc: { n: 1 } }), /does not support the update operator \$inc/)
})

t.test('an upsert inserts the filter fields, $set and $setOnInsert; an update only $set', async (t) => {
  const trace = new MingoEngine().collection('trace')
  const update = (n: number) => ({ $set: { 'stages/a': `set ${n}` }, $setOnInsert: { 'stages/b': `inserted ${n}` } })
  t.match(await trace.updateOne({ event_no: 1 }, update(1), { upsert: true }), { upsertedCount: 1, matchedCount: 0 })
  t.match(await trace.updateOne({ event_no: 1 }, update(2), { upsert: true }), { upsertedCount: 0, matchedCount: 1 })
  t.strictSame(await trace.findOne({}, { projection: { _id: 0 } }), { event_no: 1, 'stages/a': 'set 2', 'stages/b': 'inserted 1' })
})

t.test('$min sets a missing path and lowers an existing one, nested paths included; $expr filters an update', async (t) => {
  const trace = new MingoEngine().collection('trace')
  await trace.updateOne({ event_no: 1 }, { $min: { 'summary.first.a': 5 } }, { upsert: true })
  await trace.updateOne({ event_no: 1 }, { $min: { 'summary.first.a': 7, 'summary.first.b': 9 } })
  await trace.updateOne({ event_no: 1 }, { $min: { 'summary.first.a': 3 } })
  t.strictSame((await trace.findOne({}, { projection: { _id: 0 } }))?.summary, { first: { a: 3, b: 9 } })
  const inStep = { $expr: { $eq: [{ $arrayElemAt: ['$log', -1] }, '$summary.last'] } }
  await trace.updateOne({ event_no: 1 }, { $set: { log: [{ at: 1 }], 'summary.last': { at: 1 } } })
  t.match(await trace.updateOne({ event_no: 1, ...inStep }, { $set: { n: 1 } }), { matchedCount: 1 })
  await trace.updateOne({ event_no: 1 }, { $push: { log: { at: 2 } } })
  t.match(await trace.updateOne({ event_no: 1, ...inStep }, { $set: { n: 2 } }), { matchedCount: 0 }, 'the last element is no longer the one named')
})

t.test('unique indexes: a repeated key is E11000, also for data already there', async (t) => {
  const events = new MingoEngine().collection('events')
  await events.insertOne({ event_no: 1 })
  await events.insertOne({ event_no: 1 })
  await t.rejects(events.createIndexes([{ key: { event_no: 1 }, unique: true }]), { code: 11000 })
  await events.deleteOne({ event_no: 1 })
  await events.createIndexes([{ key: { event_no: 1 }, unique: true }])
  await t.rejects(events.insertOne({ event_no: new Double(1) }), { code: 11000 }, 'numbers compare by value')
  t.equal(await events.countDocuments({}), 1)
})

t.test('away: every call rejects with a MongoNetworkError until it is back', async (t) => {
  const engine = new MingoEngine()
  const users = engine.collection('users')
  engine.away = true
  await t.rejects(engine.db.command({ ping: 1 }), MongoNetworkError)
  await t.rejects(users.find({}).toArray(), MongoNetworkError)
  await t.rejects(users.updateOne({ name: 'ana' }, { $set: { role: 'reader' } }), MongoNetworkError)
  engine.away = false
  t.strictSame(await engine.db.command({ ping: 1 }), { ok: 1 })
  t.strictSame(await users.find({}).toArray(), [])
})

t.test('$push appends one value or several with $each, creating the array when missing; other modifiers and non-arrays are refused', async (t) => {
  const trace = new MingoEngine().collection('trace')
  await trace.updateOne({ event_no: 1 }, { $set: { n: 'a' }, $push: { log: { at: 1 } } }, { upsert: true })
  await trace.updateOne({ event_no: 1 }, { $push: { log: { at: 2 } } })
  t.strictSame((await trace.findOne({}, { projection: { _id: 0 } }))?.log, [{ at: 1 }, { at: 2 }])
  await t.rejects(trace.updateOne({ event_no: 1 }, { $push: { n: 'b' } }), { code: 2 }, 'onto a string, as the server refuses it')
  await trace.updateOne({ event_no: 1 }, { $push: { log: { $each: [{ at: 3 }, { at: 4 }] } } })
  t.strictSame((await trace.findOne({}, { projection: { _id: 0 } }))?.log, [{ at: 1 }, { at: 2 }, { at: 3 }, { at: 4 }], 'appended in order')
  await t.rejects(trace.updateOne({ event_no: 1 }, { $push: { log: { $each: [5], $slice: -2 } } }), /no \$push modifier but \$each/)
  await t.rejects(trace.updateOne({ event_no: 1 }, { $set: { log: [] }, $push: { log: 1 } }), { code: 40 })
})

t.test('change streams: the events of each write, from where the stream opened, with resume tokens', async (t) => {
  const engine = new MingoEngine()
  const trace = engine.collection('trace')
  await trace.insertOne({ event_no: 1, log: [] })
  const stream = trace.watch([{ $match: { operationType: { $in: ['insert', 'update'] } } }])
  t.equal(await stream.tryNext(), null, 'opened after the first insert: nothing yet')
  const opened = stream.resumeToken
  await trace.updateOne({ event_no: 1 }, { $set: { a: 'x' }, $push: { log: 1 } })
  await trace.updateOne({ event_no: 1 }, { $set: { a: 'x' } })
  await trace.updateOne({ event_no: 2 }, { $push: { log: 1 } }, { upsert: true })
  await trace.bulkWrite([{ replaceOne: { filter: { event_no: 2 }, replacement: { event_no: 2 } } }])
  await trace.deleteOne({ event_no: 2 })
  t.match(await stream.tryNext(), { operationType: 'update', updateDescription: { updatedFields: { a: 'x', 'log.0': 1 }, removedFields: [] } })
  t.match(await stream.tryNext(), { operationType: 'insert', fullDocument: { event_no: 2, log: [1] } }, 'the unchanged update made none')
  t.equal(await stream.tryNext(), null, 'replace and delete are not matched')

  const again = trace.watch([], { resumeAfter: opened })
  t.strictSame((await again.tryNext())?.updateDescription?.updatedFields, { a: 'x', 'log.0': 1 }, 'resumed after the token')
  t.throws(() => trace.watch([], { fullDocument: 'updateLookup' }), /does not support the change stream options fullDocument/)
  t.throws(() => trace.watch([{ $lookup: {} }]), /does not support the change stream stage \$lookup/)
})

t.test('change streams: an error closes the stream; a standalone cannot open one', async (t) => {
  const engine = new MingoEngine()
  const trace = engine.collection('trace')
  const stream = trace.watch()
  await stream.tryNext()
  engine.failNext('getMore', new MongoNetworkError('connection closed'))
  await t.rejects(stream.tryNext(), MongoNetworkError)
  await t.rejects(stream.tryNext(), /ChangeStream is closed/)
  engine.replicaSet = false
  await t.rejects(trace.watch().tryNext(), { code: 40573 })
})
