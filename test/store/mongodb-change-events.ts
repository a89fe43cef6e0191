import { Double, Int32, Long } from 'mongodb'
import t from 'tap'
import { transitionsIn } from '../../src/store/mongodb/change-feed.js'
import { TransitionBuffer } from '../../src/store/mongodb/feed-buffer.js'

const pushed = (event_no: number, at: number) => ({ event_no, key: 'stages/a', from: null, to: 'complete' as const, at, by: 'pipeline' })

t.test('change events: the transitions a write added, in the order written', async (t) => {
  const update = (updatedFields: object) => ({ operationType: 'update', updateDescription: { updatedFields } })
  t.strictSame(transitionsIn(update({ 'stages/a': 'complete', update_timestamp: 3, 'transitions.10': pushed(1, 3) })), [pushed(1, 3)], 'a $push onto an existing history')
  t.strictSame(transitionsIn(update({ 'transitions.10': pushed(1, 4), 'transitions.9': pushed(1, 3) })), [pushed(1, 3), pushed(1, 4)], 'by index, not by text')
  t.strictSame(transitionsIn(update({ transitions: [pushed(1, 3)] })), [pushed(1, 3)], 'the history set for the first time')
  t.strictSame(transitionsIn(update({ transitions: [pushed(1, 1), pushed(1, 2)] })), [pushed(1, 2)], 'a whole history: only its last is new')
  t.strictSame(transitionsIn({ operationType: 'insert', fullDocument: { transitions: [pushed(2, 1), pushed(2, 5)] } }), [pushed(2, 5)], 'a new trace')
  t.strictSame(transitionsIn(update({ 'stages/a': 'complete', update_timestamp: 3 })), [], 'a write by another program')
  t.strictSame(transitionsIn(update({ 'transitionsX.1': pushed(1, 3), 'transitions.1.at': 5 })), [], 'other paths')
  t.strictSame(transitionsIn({ operationType: 'insert', fullDocument: { event_no: 2 } }), [])
  t.strictSame(transitionsIn({ operationType: 'replace', fullDocument: { transitions: [pushed(2, 1)] } }), [], 'a bulk import')
  t.strictSame(transitionsIn({ operationType: 'delete' }), [])
})

t.test('change events: numbers as any writer stored them; what is not a transition is skipped', async (t) => {
  const stored = { event_no: Long.fromNumber(3_100_000_002), key: 'stages/a', from: 'not_required', to: 'complete', at: new Double(7.5), by: 'ops' }
  t.strictSame(transitionsIn({ operationType: 'update', updateDescription: { updatedFields: { 'transitions.0': stored } } }), [
    { event_no: 3_100_000_002, key: 'stages/a', from: 'not_required', to: 'complete', at: 7.5, by: 'ops' }
  ])
  const broken = [{ ...pushed(1, 1), to: 'failed' }, { ...pushed(1, 1), at: 'soon' }, { ...pushed(1, 1), from: new Int32(3) }, 'text', null]
  const updatedFields = Object.fromEntries(broken.map((value, i) => [`transitions.${i}`, value]))
  t.strictSame(transitionsIn({ operationType: 'update', updateDescription: { updatedFields } }), [])
})

t.test('the feed buffer: positions from 1, pages after a position, the oldest dropped in bulk when full', async (t) => {
  const buffer = new TransitionBuffer(4)
  t.equal(buffer.last, 0)
  t.strictSame(buffer.after(0, 10), { transitions: [], position: 0 })
  for (const at of [1, 2, 3]) buffer.add(pushed(1, at))
  t.equal(buffer.last, 3)
  t.strictSame(buffer.after(0, 2), { transitions: [pushed(1, 1), pushed(1, 2)], position: 2 })
  t.strictSame(buffer.after(2, 10), { transitions: [pushed(1, 3)], position: 3 })
  t.strictSame(buffer.after(3, 10), { transitions: [], position: 3 })
  for (const at of [4, 5]) buffer.add(pushed(1, at))
  t.equal(buffer.last, 5, 'positions go on')
  t.strictSame(buffer.after(3, 10).transitions.map((item) => item.at), [4, 5], 'the ones kept')
  t.strictSame(buffer.after(0, 10), { transitions: [pushed(1, 4), pushed(1, 5)], position: 5 }, 'a reader left behind goes on from the oldest kept')
})
