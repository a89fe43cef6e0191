import t from 'tap'
import { MongoStore } from '../../src/store/mongodb/store.js'
import { STATUS_WRITE_ATTEMPTS } from '../../src/store/mongodb/traces.js'
import { StoreUnavailableError } from '../../src/store/port.js'
import { defaultSites } from '../sites.js'
import { engineOnly } from './mongo-backends.js'

const KEY = 'stages/baseband_conversion/sites/kko'

/** How the adapter keeps history on MongoDB: conditional writes that lose a race and retry. */

t.test('a conditional write that loses a race to another writer retries, and records exactly one transition, from what it replaced', async (t) => {
  const { store, db, engine } = await engineOnly.open(t)
  await store.traces.create(1, 5)
  // The pipeline writes the key straight into MongoDB between the adapter's read and its write.
  engine!.beforeNext('updateOne', () => void db.collection('trace').updateOne({ event_no: 1 }, { $set: { [KEY]: 'not_required' } }))
  engine!.calls.length = 0

  t.equal(await store.traces.setStatus(1, KEY, 'complete', 10, 'operator'), true)
  // The status write's calls come first; the kept audit's reads and write follow them (the keeper's `keep`, src/kept-audit/keeper.ts).
  const calls = engine!.calls.slice(0, 5).map((call) => call.method)
  t.strictSame(calls, ['findOne', 'updateOne', 'updateOne', 'findOne', 'updateOne'], 'read, a write that lost (to the one landing first), read again, write')
  t.strictSame(await store.traces.history(1), [{ key: KEY, from: 'not_required', to: 'complete', at: 10, by: 'operator' }])
  t.match(await store.traces.find(1), { [KEY]: 'complete', update_timestamp: 10 })
})

t.test('two instances set one key at once: one change, one transition; the other finds it done', async (t) => {
  const { store, engine } = await engineOnly.open(t)
  const other = await MongoStore.open(engine!.db, async () => {}, defaultSites)
  await store.traces.create(2, 5)
  // On the engine both read `incomplete` before either writes: a race every time.
  const changed = await Promise.all([store.traces.setStatus(2, KEY, 'complete', 10, 'a'), other.traces.setStatus(2, KEY, 'complete', 11, 'b')])
  t.strictSame(changed, [true, false])
  t.strictSame(await store.traces.history(2), [{ key: KEY, from: 'incomplete', to: 'complete', at: 10, by: 'a' }])
  t.match(await store.traces.find(2), { [KEY]: 'complete', update_timestamp: 11 }, 'the unchanged write still bumps the time')
})

t.test('a writer that loses the creation of a trace meets E11000, retries, and records `from` as the winner stored it', async (t) => {
  const { store, db, engine } = await engineOnly.open(t)
  engine!.beforeNext('updateOne', () => void db.collection('trace').insertOne({ event_no: 3, [KEY]: 'not_required' }))
  t.equal(await store.traces.setStatus(3, KEY, 'complete', 10, 'pipeline'), true)
  t.strictSame(await store.traces.history(3), [{ key: KEY, from: 'not_required', to: 'complete', at: 10, by: 'pipeline' }])
  t.equal(await db.collection('trace').countDocuments({ event_no: 3 }), 1)
})

t.test('a key that keeps changing under the write gives up after a bounded number of attempts, with 503', async (t) => {
  const { store, db, engine } = await engineOnly.open(t)
  await store.traces.create(4, 5)
  const values = ['complete', 'incomplete']
  for (let attempt = 0; attempt < STATUS_WRITE_ATTEMPTS; attempt++) {
    engine!.beforeNext('updateOne', () => void db.collection('trace').updateOne({ event_no: 4 }, { $set: { [KEY]: values[attempt % 2] } }))
  }
  await t.rejects(store.traces.setStatus(4, KEY, 'complete', 10, 'pipeline'), StoreUnavailableError)
  t.strictSame(await store.traces.history(4), [], 'nothing recorded, since nothing this writer wrote was stored')
})

t.test('the history lives in the trace document; trace reads leave it out', async (t) => {
  const { store, db } = await engineOnly.open(t)
  await store.traces.setStatus(5, KEY, 'complete', 10, 'pipeline')
  const stored = await db.collection('trace').findOne({ event_no: 5 })
  t.strictSame(stored?.transitions, [{ event_no: 5, key: KEY, from: null, to: 'complete', at: 10, by: 'pipeline' }])
  t.notOk('transitions' in ((await store.traces.find(5)) ?? {}), 'find')
  t.notOk('transitions' in ((await store.views.eventParts(5)).trace ?? {}), 'event parts')
})

t.test('history reads what it can of a transitions field another program wrote', async (t) => {
  const { store, db } = await engineOnly.open(t)
  const good = { event_no: 6, key: KEY, from: null, to: 'complete', at: 10, by: 'pipeline' }
  await db.collection('trace').insertOne({ event_no: 6, transitions: [good, { note: 'not a transition' }, 'text', { ...good, to: 'failed' }] })
  const { event_no: _eventNo, ...record } = good
  t.strictSame(await store.traces.history(6), [record])
  await db.collection('trace').insertOne({ event_no: 7, transitions: 'not an array' })
  t.strictSame(await store.traces.history(7), [])
})
