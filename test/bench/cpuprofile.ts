import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { mainThreadProfile, summariseProfile } from '../../bench/cpuprofile.js'

/** Start-up (node core) for 0.2 ms, then the load: 2 ms in the service's own code and 1 ms idle. */
const profile = {
  nodes: [
    { id: 1, callFrame: { functionName: '(root)', url: '', lineNumber: -1 }, children: [2, 3, 4] },
    { id: 2, callFrame: { functionName: '(idle)', url: '', lineNumber: -1 } },
    { id: 3, callFrame: { functionName: 'work', url: 'file:///repo/dist/src/work.js', lineNumber: 9 } },
    { id: 4, callFrame: { functionName: 'boot', url: 'node:internal/boot', lineNumber: 0 } }
  ],
  startTime: 1000,
  samples: [4, 4, 3, 2, 3],
  timeDeltas: [100, 100, 1000, 1000, 1000]
}

t.test('a profile summarised over the span of the load leaves start-up out', async (t) => {
  const file = join(t.testdir(), 'CPU.cpuprofile')
  writeFileSync(file, JSON.stringify(profile))
  const whole = summariseProfile(file)
  t.equal(whole.busyMs, 2.2, 'the whole profile: start-up and load')
  const load = summariseProfile(file, 25, /^$/, { startUs: 2000, endUs: 5000 })
  t.equal(load.busyMs, 2)
  t.equal(load.idleMs, 1)
  t.strictSame(load.byPackage, [{ name: 'frb-tracer src/', ms: 2, percent: 100 }])
  t.strictSame(
    load.byFunction.map((share) => share.name),
    ['work (dist/src/work.js:10)']
  )
})

t.test("a run's profiles: the main thread's is read, not a password-hashing thread's", async (t) => {
  const names = ['CPU.20261130.062256.5640.0.001.cpuprofile', 'CPU.20261130.062257.5640.1.002.cpuprofile', 'notes.txt']
  t.equal(mainThreadProfile(names), 'CPU.20261130.062256.5640.0.001.cpuprofile')
  t.equal(mainThreadProfile([...names].reverse()), 'CPU.20261130.062256.5640.0.001.cpuprofile')
  t.equal(mainThreadProfile(['CPU.20261130.062257.5640.1.002.cpuprofile']), undefined, 'none of the main thread')
})
