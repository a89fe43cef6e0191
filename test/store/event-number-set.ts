import fc from 'fast-check'
import t from 'tap'
import { EventNumberSet } from '../../src/store/event-number-set.js'

/** Event numbers as a pipeline gives them (rising, with gaps), and any safe integer besides. */
const eventNumbers = fc.oneof(
  fc.integer({ min: 0, max: 200_000 }),
  fc.integer({ min: -70_000, max: 70_000 }),
  fc.constantFrom(Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, 65_535, 65_536, -65_536, -1, 0)
)

t.test('an EventNumberSet answers add and has as a Set of the same numbers does', async (t) => {
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.boolean(), eventNumbers), { maxLength: 6000, size: 'max' }), (operations) => {
      const compact = new EventNumberSet()
      const reference = new Set<number>()
      for (const [adding, n] of operations) {
        if (adding) {
          const added = compact.add(n)
          if (added !== !reference.has(n)) return false
          reference.add(n)
        } else if (compact.has(n) !== reference.has(n)) return false
      }
      return [...reference].every((n) => compact.has(n))
    }),
    { numRuns: 200 }
  )
  t.pass('200 random histories of adds and lookups agreed with a Set')
})

t.test('a bucket past 4096 numbers turns into a bitmap and keeps every number', async (t) => {
  const set = new EventNumberSet()
  // Every third number of one bucket, in falling order: the list's slow path, then the bitmap.
  const added: number[] = []
  for (let n = 65_535; n >= 0; n -= 3) added.push(n)
  t.ok(added.every((n) => set.add(n)), 'each added once')
  t.ok(added.every((n) => !set.add(n)), 'each found when added again')
  t.notOk(set.has(65_534), 'a number between them is not in it')
  t.equal(set.arrayBytes, 8192, 'one bucket, as a bitmap of 8 KiB')
})

t.test('a year of rising event numbers costs about two bytes each', async (t) => {
  const set = new EventNumberSet()
  // 20,000 events spread over numbers 1..60,000, as the demo's year has them.
  for (let n = 1; n <= 60_000; n += 3) set.add(n)
  t.ok(set.arrayBytes <= 2 * 8192, `${set.arrayBytes} bytes for 20,000 numbers`)
})
