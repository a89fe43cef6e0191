import { once } from 'node:events'
import { Worker } from 'node:worker_threads'
import t from 'tap'

const RACERS = 4
/** Times the racers meet at a barrier, spinning; a wait there is far longer than the race. */
const ROUNDS = 12
/**
 * Instances started one after another from each barrier, each on a folder of its own. The racers
 * do the same work for each, so they stay close together for a run of them: many races for one
 * barrier. With the secret file created empty and then written (as before 958e207), a third or
 * more of these 300 starts split here on a busy machine. A barrier for every start, as before,
 * found about one in five, and the four threads spinning on two cores spent most of the time there.
 */
const STARTS_A_ROUND = 25

/**
 * A racer started with tap's import hooks (TypeScript, mocks, process info) loads them and the
 * configuration's modules through them, which took many times longer than the race beside busy
 * loops. Compiled, a racer needs none of them; run from the sources, the TypeScript hook loads it.
 */
const execArgv = import.meta.url.endsWith('.ts') ? process.execArgv : []

t.test('instances that generate the JWT secret at the same moment all read the one secret written', async (t) => {
  const base = t.testdir()
  const gate = new Int32Array(new SharedArrayBuffer(4 * ROUNDS))
  const workerData = { base, rounds: ROUNDS, startsARound: STARTS_A_ROUND, racers: RACERS, gate }
  const racers = Array.from({ length: RACERS }, () => new Worker(new URL('./secret-racer.js', import.meta.url), { workerData, execArgv }))
  const outcomes = await Promise.all(racers.map(async (racer) => (await once(racer, 'message'))[0] as string[]))
  t.equal(outcomes[0]!.length, ROUNDS * STARTS_A_ROUND, 'every racer started every instance')
  const split = Array.from({ length: ROUNDS * STARTS_A_ROUND }, (_, start) => new Set(outcomes.map((racer) => racer[start]))).filter((seen) => seen.size !== 1)
  t.same(split.map((seen) => [...seen]), [], 'every start: one secret, the same for every racer')
  t.notOk(outcomes.flat().some((outcome) => outcome.startsWith('refused')), 'no racer refused to start')
})
