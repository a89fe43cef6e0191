import { MongoNetworkError } from 'mongodb'
import t from 'tap'
import { MongoStore } from '../../src/store/mongodb/store.js'
import { StoreUnavailableError } from '../../src/store/port.js'
import { defaultSites } from '../sites.js'
import { engineOnly } from './mongo-backends.js'

const KEY = 'stages/tsar_classification'
const transition = (event_no: number, at: number) => ({ event_no, key: KEY, from: null, to: 'complete', at, by: 'pipeline' })
const watches = (calls: { method: string }[]) => calls.filter((call) => call.method === 'watch').length

/** The transition feed on MongoDB: the trace collection's change stream, read on demand. */

t.test('the feed is every instance’s transitions: another instance on the same database writes, this one reads', async (t) => {
  const { store, engine } = await engineOnly.open(t)
  const other = await MongoStore.open(engine!.db, async () => {}, defaultSites)
  const start = await store.transitions.position()
  await other.traces.setStatus(1, KEY, 'complete', 10, 'pipeline')
  await store.traces.setStatus(2, KEY, 'complete', 11, 'pipeline')
  t.strictSame((await store.transitions.since(start, 10)).transitions, [transition(1, 10), transition(2, 11)])
  t.equal(watches(engine!.calls), 1, 'one change stream, opened on first use')
})

t.test('after a dropped change stream the feed resumes from its resume token: nothing lost, nothing repeated', async (t) => {
  const { store, engine } = await engineOnly.open(t)
  const start = await store.transitions.position()
  await store.traces.setStatus(1, KEY, 'complete', 10, 'pipeline')
  const first = await store.transitions.since(start, 10)
  t.strictSame(first.transitions, [transition(1, 10)])

  await store.traces.setStatus(2, KEY, 'complete', 11, 'pipeline')
  engine!.failNext('getMore', new MongoNetworkError('connection 3 to 127.0.0.1:27017 closed'))
  await t.rejects(store.transitions.since(first.position, 10), StoreUnavailableError, 'the read that met the drop')
  await store.traces.setStatus(3, KEY, 'complete', 12, 'pipeline')
  const rest = await store.transitions.since(first.position, 10)
  t.strictSame(rest.transitions, [transition(2, 11), transition(3, 12)], 'written before and after the drop')
  t.equal(watches(engine!.calls), 2, 'a new stream')
  t.strictSame(await store.transitions.since(rest.position, 10), { transitions: [], position: rest.position })
})

t.test('while the database is away the feed answers 503, and goes on where it stopped once it is back', async (t) => {
  const { store, engine } = await engineOnly.open(t)
  const start = await store.transitions.position()
  await store.traces.setStatus(1, KEY, 'complete', 10, 'pipeline')
  engine!.away = true
  await t.rejects(store.transitions.since(start, 10), StoreUnavailableError)
  await t.rejects(store.transitions.position(), StoreUnavailableError)
  engine!.away = false
  t.strictSame((await store.transitions.since(start, 10)).transitions, [transition(1, 10)])
})

t.test('on a server that is not a replica set the feed rejects with StoreUnavailableError at once', async (t) => {
  const { store, engine } = await engineOnly.open(t)
  engine!.replicaSet = false
  await t.rejects(store.transitions.position(), { name: 'StoreUnavailableError', message: /change stream, which only a replica set has/ })
  await t.rejects(store.transitions.since(0, 10), StoreUnavailableError)
  t.equal(await store.traces.setStatus(1, KEY, 'complete', 10, 'pipeline'), true, 'the history does not need it')
})

t.test('after the trace collection is dropped (invalidate) the feed goes on after it, missing no write', async (t) => {
  const { store, engine } = await engineOnly.open(t)
  const start = await store.transitions.position()
  await store.traces.setStatus(1, KEY, 'complete', 10, 'pipeline')
  engine!.collection('trace').changes.invalidate()
  await store.traces.setStatus(2, KEY, 'complete', 11, 'pipeline')
  t.strictSame((await store.transitions.since(start, 10)).transitions, [transition(1, 10), transition(2, 11)])
  await store.traces.setStatus(3, KEY, 'complete', 12, 'pipeline')
  t.strictSame((await store.transitions.since(start, 10)).transitions.map((item) => item.event_no), [1, 2, 3], 'the new stream goes on')
})

t.test('writes other programs make, unchanged updates and bulk imports add nothing to the feed', async (t) => {
  const { store, db } = await engineOnly.open(t)
  const start = await store.transitions.position()
  await db.collection('trace').insertOne({ event_no: 1, [KEY]: 'complete' })
  await db.collection('trace').updateOne({ event_no: 1 }, { $set: { [KEY]: 'incomplete' } })
  await store.traces.setStatus(1, KEY, 'incomplete', 10, 'pipeline')
  await store.traces.upsert([{ event_no: 2, [KEY]: 'complete' }, { event_no: 1, [KEY]: 'complete' }])
  t.strictSame(await store.transitions.since(start, 10), { transitions: [], position: start })
})

t.test('callers at the same moment share the reads of the stream, and each sees the writes made before its call', async (t) => {
  const { store, engine } = await engineOnly.open(t)
  const start = await store.transitions.position()
  await store.traces.setStatus(1, KEY, 'complete', 10, 'pipeline')
  engine!.calls.length = 0
  const pages = await Promise.all([store.transitions.since(start, 10), store.transitions.since(start, 10), store.transitions.position()])
  t.strictSame(pages[0], pages[1])
  t.strictSame(pages[0].transitions, [transition(1, 10)])
  t.equal(pages[2], pages[0].position)
  // The engine answers each tryNext with one read: the first caller's takes the change and finds no
  // more (2); the later callers share one more (1). Three separate reads would make 4.
  t.equal(engine!.calls.filter((call) => call.method === 'getMore').length, 3)
})
