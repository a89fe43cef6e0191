import fc from 'fast-check'
import t from 'tap'
import type { HistoryPosition, TransitionRecord } from '../../src/domain/records.js'
import type { Store } from '../../src/store/port.js'
import { engineOnly, mongoBackends } from './mongo-backends.js'

// Issue 29, finding 1, on MongoDB: the server cuts a part of a history out of its trace document,
// in `at` order, then the order written; only the part reaches the service.

const KEY = 'stages/baseband_conversion/sites/kko'
const transition = (at: number, by = 'other') => ({ event_no: 5, key: KEY, from: null, to: 'complete' as const, at, by })

async function walk(store: Store, eventNo: number, limit: number) {
  const read: TransitionRecord[] = []
  let after: HistoryPosition | null = null
  do {
    const part = await store.traces.historyPage(eventNo, after, limit)
    t.ok(part.transitions.length <= limit)
    read.push(...part.transitions)
    after = part.next
  } while (after !== null)
  return { read }
}

for (const backend of mongoBackends()) {
  t.test(`on ${backend.name}: a history another program wrote, out of order and with what is no transition, read a part at a time, is what history() reads`, async (t) => {
    const { store, db } = await backend.open(t)
    const element = fc.oneof(
      { weight: 6, arbitrary: fc.integer({ min: 0, max: 5 }).map((at) => transition(at)) },
      {
        weight: 1,
        arbitrary: fc.constantFrom<unknown>(
          null,
          7,
          'text',
          [transition(1)],
          { ...transition(2), at: 'x' },
          { ...transition(2), to: 'bogus' },
          { ...transition(2), from: 5 },
          { ...transition(2), by: null },
          { key: KEY, from: null, to: 'complete', at: 2, by: 'no event' },
          { ...transition(2), at: Number.POSITIVE_INFINITY }
        )
      }
    )
    let eventNo = 100
    await fc.assert(
      fc.asyncProperty(fc.array(element, { maxLength: 20 }), fc.integer({ min: 1, max: 4 }), async (history, limit) => {
        eventNo++
        await db.collection('trace').insertOne({ event_no: eventNo, transitions: history.map((item) => (item !== null && typeof item === 'object' && !Array.isArray(item) ? { ...item, event_no: eventNo } : item)) })
        const whole = await store.traces.history(eventNo)
        const { read } = await walk(store, eventNo, limit)
        t.strictSame(read, whole)
      }),
      { numRuns: 40 }
    )
    await db.collection('trace').insertOne({ event_no: 99, transitions: 'not a history' })
    t.strictSame(await store.traces.historyPage(99, null, 5), { transitions: [], next: null }, 'a history that is no array is none')
  })
}

t.test('only the part reaches the service: a part of a 2,000-transition history brings that part, not the history', async (t) => {
  const { store, engine } = await engineOnly.open(t)
  await store.traces.create(5, 0)
  for (let start = 0; start < 2000; start += 1000) await store.traces.record(Array.from({ length: 1000 }, (_, i) => transition((start + i) / 10, 'pipeline')))
  const traces = engine!.collection('trace')
  const findOne = traces.findOne.bind(traces)
  const returned: number[] = []
  traces.findOne = async (...args: Parameters<typeof findOne>) => {
    const document = await findOne(...args)
    returned.push(JSON.stringify(document).length)
    return document
  }
  const whole = JSON.stringify(await store.traces.history(5)).length
  returned.length = 0
  const { read } = await walk(store, 5, 100)
  t.equal(read.length, 2000)
  t.equal(returned.length, 20, 'one read a part')
  t.ok(Math.max(...returned) < whole / 10, `each part's read brings at most ${Math.max(...returned)} bytes of the history's ${whole}`)
})
