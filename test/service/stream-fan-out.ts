import fc from 'fast-check'
import t from 'tap'
import type { FeedTransition } from '../../src/domain/records.js'
import { transitionFilter, type TransitionFilter } from '../../src/domain/transition-filter.js'
import { StreamFanOut } from '../../src/infrastructure/live-stream/stream-fan-out.js'
import type { TransitionHub, TransitionListener } from '../../src/infrastructure/live-stream/transition-hub.js'

/** A hub that hands over the pages a test gives it. */
function fakeHub() {
  const listeners = new Set<TransitionListener>()
  const hub = {
    polling: false,
    listen: async (listener: TransitionListener) => {
      listeners.add(listener)
      return () => void listeners.delete(listener)
    }
  }
  const publish = (page: FeedTransition[]) => {
    for (const listener of listeners) void listener.deliver(page)
  }
  return { hub: hub as unknown as TransitionHub, listeners, publish }
}

const KEYS = ['stages/tsar_classification', 'stages/baseband_conversion/sites/kko', 'stages/data_registration/sites/chime', 'stages/baseband_conversion/sites/gbo']
const transitionArb = fc.record({
  event_no: fc.integer({ min: 0, max: 4 }),
  key: fc.constantFrom(...KEYS),
  from: fc.constantFrom(null, 'incomplete', 'complete'),
  to: fc.constantFrom('complete' as const, 'incomplete' as const),
  at: fc.double({ min: 1, max: 2e9, noNaN: true }),
  by: fc.constantFrom('pipeline', 'tsar')
})
const filterArb: fc.Arbitrary<TransitionFilter> = fc.record(
  { eventNo: fc.integer({ min: 0, max: 4 }), site: fc.constantFrom('kko', 'chime', 'gbo', 'hco') },
  { requiredKeys: [] }
)
const message = (transition: FeedTransition) => `${JSON.stringify(transition)}\n`

t.test('every stream gets exactly the transitions its filter lets through, in order, whatever the filters and pages', async (t) => {
  await fc.assert(
    fc.asyncProperty(fc.array(filterArb, { minLength: 1, maxLength: 12 }), fc.array(fc.array(transitionArb, { maxLength: 20 }), { maxLength: 5 }), async (filters, pages) => {
      const { hub, publish } = fakeHub()
      const fanOut = new StreamFanOut(hub, (error) => {
        throw error
      })
      const received = filters.map(() => ({ text: '', count: 0 }))
      await Promise.all(filters.map((filter, i) => fanOut.subscribe(filter, (buffer, count) => ((received[i]!.text += buffer.toString()), (received[i]!.count += count)), message)))
      for (const page of pages) publish(page)
      // Pages reach a thousand streams a slice a turn: let the turns pass.
      await new Promise((resolve) => setImmediate(resolve))
      filters.forEach((filter, i) => {
        const expected = pages.flat().filter(transitionFilter(filter))
        t.equal(received[i]!.text, expected.map(message).join(''))
        t.equal(received[i]!.count, expected.length)
      })
    }),
    { numRuns: 200 }
  )
})

t.test('streams of one filter share one buffer a page; the hub is listened to exactly while a stream is open', async (t) => {
  const { hub, listeners, publish } = fakeHub()
  const fanOut = new StreamFanOut(hub, (error) => {
    throw error
  })
  const buffers: Buffer[] = []
  const stops = await Promise.all(Array.from({ length: 3 }, () => fanOut.subscribe({ site: 'kko' }, (buffer) => void buffers.push(buffer), message)))
  t.equal(listeners.size, 1, 'one listener for every stream')
  t.equal(fanOut.listeners, 3)
  publish([{ event_no: 1, key: KEYS[1]!, from: null, to: 'complete', at: 1, by: 'pipeline' }])
  t.equal(buffers.length, 3)
  t.ok(buffers[0] === buffers[1] && buffers[1] === buffers[2], 'the same buffer, made once')
  for (const stop of stops) stop()
  stops[0]!()
  t.equal(fanOut.listeners, 0)
  t.equal(listeners.size, 0, 'no stream, no listening')
})

t.test('a page for a thousand streams is handed over a slice at a time, with turns of the event loop between', async (t) => {
  const { hub, publish } = fakeHub()
  const fanOut = new StreamFanOut(hub, (error) => {
    throw error
  })
  let delivered = 0
  await Promise.all(Array.from({ length: 1000 }, () => fanOut.subscribe({}, () => void delivered++, message)))
  publish([{ event_no: 1, key: KEYS[0]!, from: null, to: 'complete', at: 1, by: 'tsar' }])
  t.ok(delivered > 0 && delivered < 1000, `${delivered} in the first turn`)
  let turns = 0
  while (delivered < 1000) {
    await new Promise((resolve) => setImmediate(resolve))
    turns++
  }
  t.ok(turns > 1, `the rest over ${turns} more turns`)
})
