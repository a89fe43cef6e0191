import t from 'tap'
import { describeMemory, parseMemory } from '../../bench/memory.js'

const MB = 1024 * 1024
const metrics = [
  '# HELP process_resident_memory_bytes Resident memory size in bytes.',
  '# TYPE process_resident_memory_bytes gauge',
  `process_resident_memory_bytes ${205 * MB}`,
  `nodejs_heap_size_total_bytes ${120 * MB}`,
  `nodejs_heap_size_used_bytes ${80 * MB}`,
  `nodejs_external_memory_bytes ${10 * MB}`,
  `nodejs_heap_space_size_total_bytes{space="old"} ${90 * MB}`,
  ''
].join('\n')

t.test('the memory of the service from its /metrics, and what is neither heap nor external', async (t) => {
  const memory = parseMemory(metrics)
  t.strictSame(memory, { rssMb: 205, heapTotalMb: 120, heapUsedMb: 80, externalMb: 10, restMb: 75 })
  t.equal(describeMemory(memory), 'RSS 205 MB: V8 heap 120 MB (used 80), external 10 MB, the rest (code, stacks, C allocator) 75 MB')
})

t.test('a /metrics without one of the four is an error, not a zero', async (t) => {
  t.throws(() => parseMemory(metrics.replace(/^nodejs_external_memory_bytes .*$/m, '')), /no nodejs_external_memory_bytes/)
})
