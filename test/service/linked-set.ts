import t from 'tap'
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { LinkedSet } from '../../src/infrastructure/streamed-responses/linked-set.js'

t.test('a LinkedSet: members newest first, each deleted once by its link, a snapshot to iterate', async (t) => {
  const set = new LinkedSet<{ name: string }>()
  const [a, b, c] = ['a', 'b', 'c'].map((name) => ({ name }))
  const links = [a!, b!, c!].map((member) => set.add(member))
  t.strictSame([...set], [c, b, a])

  set.delete(links[1]!)
  set.delete(links[1]!)
  t.strictSame([...set], [c, a], 'a second delete of a link does nothing')

  const seen: { name: string }[] = []
  for (const member of set) {
    seen.push(member)
    for (const link of links) set.delete(link)
  }
  t.strictSame(seen, [c, a], 'deleting while iterating (a response that ends) skips no member')
  t.strictSame([...set], [])
  set.add(b!)
  t.strictSame([...set], [b], 'an emptied set takes members again')
})

type Collect = (options: { type: 'minor' | 'major' }) => void

/** V8's own collector, asked for by kind: both are needed to show where a member ends up. */
function collector(): Collect {
  setFlagsFromString('--expose-gc')
  return runInNewContext('gc') as Collect
}

const oldSpaceUsed = () => getHeapSpaceStatistics().find((space) => space.space_name === 'old_space')!.space_used_size

/**
 * Members of about 8 KB pass through a long-lived owner ten at a time, with young collections only,
 * as requests pass through a plugin's set of responses; what the old generation grew by.
 */
function promotedThrough<E>(owner: { add(member: object): E; remove(entry: E): void }, collect: Collect): number {
  const before = oldSpaceUsed()
  const inFlight: E[] = []
  for (let made = 0; made < 2000; made += 1) {
    inFlight.push(owner.add({ payload: new Array<number>(1000).fill(made) }))
    if (inFlight.length > 10) owner.remove(inFlight.shift()!)
    if (made % 50 === 0) collect({ type: 'minor' })
  }
  for (const entry of inFlight) owner.remove(entry)
  collect({ type: 'minor' })
  collect({ type: 'minor' })
  return oldSpaceUsed() - before
}

t.test('members that leave a long-lived LinkedSet die young; through a long-lived Set they reach the old generation', async (t) => {
  const collect = collector()
  const set = new Set<object>()
  const linked = new LinkedSet<object>()
  // Two full collections move both owners into the old generation, where a plugin's set lives.
  collect({ type: 'major' })
  collect({ type: 'major' })
  const MB = 1024 * 1024
  const throughSet = promotedThrough({ add: (member) => (set.add(member), member), remove: (member) => set.delete(member) }, collect)
  collect({ type: 'major' })
  const throughLinked = promotedThrough({ add: (member) => linked.add(member), remove: (link) => linked.delete(link) }, collect)
  // Were V8 to drop what a replaced table held, the Set would not need replacing: this says so on the Node the suite runs on.
  t.ok(throughSet > 4 * MB, `through a Set the old generation grew by ${(throughSet / MB).toFixed(1)} MB of the 16 MB made`)
  t.ok(throughLinked < 1 * MB, `through a LinkedSet by ${(throughLinked / MB).toFixed(1)} MB`)
})
