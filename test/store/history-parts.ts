import fc from 'fast-check'
import type { Test } from 'tap'
import type { HistoryPosition, TransitionRecord } from '../../src/domain/records.js'
import type { Store } from '../../src/store/port.js'
import type { OpenStore } from './conformance.js'

// Issue 29, finding 1: a part of a history is read after a position the store gave; no part counts the history.

/** Every part of event `eventNo`'s history, `limit` at a time, as a client follows them. */
async function walk(store: Store, eventNo: number, limit: number) {
  const parts: { transitions: TransitionRecord[] }[] = []
  let after: HistoryPosition | null = null
  do {
    const part = await store.traces.historyPage(eventNo, after, limit)
    parts.push({ transitions: part.transitions })
    after = part.next
  } while (after !== null)
  return parts
}

const keysOf = (parts: { transitions: TransitionRecord[] }[]) => parts.map((part) => part.transitions.map((transition) => transition.key.slice('stages/'.length)))

/** The history of a part of the suite: both adapters give the same parts of the same writes. */
export function historyPartsConformance(t: Test, open: OpenStore) {
  t.test('history a part at a time: after the position the part before gave, in the same order', async (t) => {
    const store = await open(t)
    for (const [key, at] of [['a', 50], ['b', 40], ['c', 50], ['d', 10], ['e', 60]] as const) await store.traces.setStatus(7, `stages/${key}`, 'complete', at, 'w')
    await store.traces.setStatus(8, 'stages/a', 'complete', 1, 'w')
    const parts = await walk(store, 7, 2)
    t.strictSame(keysOf(parts), [['d', 'b'], ['a', 'c'], ['e']], 'by `at`, then the order written; a part ends where the next starts')
    t.strictSame(keysOf(await walk(store, 7, 5)), [['d', 'b', 'a', 'c', 'e']], 'a part that holds the rest says none follows')
    t.strictSame(await store.traces.historyPage(9, null, 2), { transitions: [], next: null }, 'an event without a history')
    const first = await store.traces.historyPage(7, null, 1)
    t.strictSame(first.transitions, [{ key: 'stages/d', from: null, to: 'complete', at: 10, by: 'w' }], 'the whole transition')
    const past = await store.traces.historyPage(7, { at: 61, written: 0 }, 2)
    t.strictSame([past.transitions, past.next], [[], null], 'after the last transition: none')
  })

  t.test('a position holds while the history grows: what sorts after it follows, what sorts before it is not read again', async (t) => {
    const store = await open(t)
    for (const [key, at] of [['a', 10], ['b', 20], ['c', 30]] as const) await store.traces.setStatus(3, `stages/${key}`, 'complete', at, 'w')
    const first = await store.traces.historyPage(3, null, 2)
    t.strictSame(keysOf([first]), [['a', 'b']])
    // Another instance, its clock behind, writes an earlier time; then one a little later.
    await store.traces.setStatus(3, 'stages/early', 'complete', 15, 'w')
    await store.traces.setStatus(3, 'stages/late', 'complete', 40, 'w')
    const rest = await store.traces.historyPage(3, first.next, 5)
    t.strictSame(keysOf([rest]), [['c', 'late']], 'the part after the position')
    t.strictSame(keysOf(await walk(store, 3, 2)), [['a', 'early'], ['b', 'c'], ['late']], 'a walk from the start reads them all')
  })

  t.test('any writes, any part size: the parts together are the history, each at most the part size', async (t) => {
    const store = await open(t)
    const write = fc.oneof(
      fc.record({ kind: fc.constant('set' as const), key: fc.constantFrom('a', 'b', 'c'), status: fc.constantFrom('complete', 'incomplete', 'not_required'), at: fc.integer({ min: 0, max: 6 }) }),
      fc.record({ kind: fc.constant('record' as const), keys: fc.array(fc.constantFrom('a', 'b', 'x'), { minLength: 1, maxLength: 4 }), at: fc.integer({ min: 0, max: 6 }) })
    )
    let eventNo = 1000
    await fc.assert(
      fc.asyncProperty(fc.array(write, { maxLength: 25 }), fc.integer({ min: 1, max: 4 }), async (writes, limit) => {
        eventNo++
        await store.traces.create(eventNo, 0)
        for (const item of writes) {
          if (item.kind === 'set') await store.traces.setStatus(eventNo, `stages/${item.key}`, item.status, item.at / 2, 'w')
          else await store.traces.record(item.keys.map((key) => ({ event_no: eventNo, key: `stages/${key}`, from: null, to: 'complete', at: item.at / 2, by: 'r' })))
        }
        const history = await store.traces.history(eventNo)
        const parts = await walk(store, eventNo, limit)
        t.strictSame(parts.flatMap((part) => part.transitions), history)
        t.ok(parts.every((part) => part.transitions.length <= limit))
        t.ok(parts.slice(0, -1).every((part) => part.transitions.length === limit), 'only the last part is short')
      }),
      { numRuns: 40 }
    )
  })
}
