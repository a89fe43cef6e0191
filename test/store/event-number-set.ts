import fc from 'fast-check'
import t from 'tap'
import { EventNumberSet } from '../../src/store/event-number-set.js'

/** Event numbers as a pipeline gives them (rising, with gaps), and any safe integer besides. */
const eventNumbers = fc.oneof(
  fc.integer({ min: 0, max: 200_000 }),
  fc.integer({ min: -70_000, max: 70_000 }),
  fc.constantFrom(Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, 65_535, 65_536, -65_536, -1, 0)
)

t.test('an EventNumberSet says of each number added whether it was new, as a Set would', async (t) => {
  fc.assert(
    fc.property(fc.array(eventNumbers, { maxLength: 12_000, size: 'max' }), (numbers) => {
      const compact = new EventNumberSet()
      const reference = new Set<number>()
      for (const n of numbers) {
        if (compact.add(n) !== !reference.has(n)) return false
        reference.add(n)
      }
      return [...reference].every((n) => !compact.add(n))
    }),
    { numRuns: 200 }
  )
  t.pass('200 random histories of adds agreed with a Set')
})

t.test('a bucket past 4096 numbers turns into a bitmap and keeps every number', async (t) => {
  const set = new EventNumberSet()
  // Every third number of one bucket, in falling order: the list's slow path, then the bitmap.
  const added: number[] = []
  for (let n = 65_535; n >= 0; n -= 3) added.push(n)
  t.ok(added.every((n) => set.add(n)), 'each added once')
  t.ok(added.every((n) => !set.add(n)), 'each found when added again')
  t.equal(set.arrayBytes, 8192, 'one bucket, as a bitmap of 8 KiB')
  t.ok(set.add(65_534), 'a number between them was not in it')
})

t.test('the demo year: 20,000 event numbers among 1..60,000 take one 8 KiB bitmap', async (t) => {
  const set = new EventNumberSet()
  for (let n = 1; n <= 60_000; n += 3) set.add(n)
  t.equal(set.arrayBytes, 8192)
})

t.test('numbers spread thin cost at most four bytes each (two, and the room a list grows into)', async (t) => {
  const set = new EventNumberSet()
  // 3,000 numbers 100 apart: five buckets of a few hundred each, every one a list.
  for (let n = 0; n < 300_000; n += 100) set.add(n)
  t.ok(set.arrayBytes <= 4 * 3000, `${set.arrayBytes} bytes for 3,000 numbers`)
  t.ok(set.arrayBytes >= 2 * 3000, 'and not less than their two bytes each')
})
