import { once } from 'node:events'
import { Worker } from 'node:worker_threads'
import t from 'tap'

const RACERS = 4
/** With the secret file created empty and then written, about one round in five failed here. */
const ROUNDS = 300

t.test('instances that generate the JWT secret at the same moment all read the one secret written', async (t) => {
  const base = t.testdir()
  const gate = new Int32Array(new SharedArrayBuffer(4 * ROUNDS))
  const racers = Array.from({ length: RACERS }, () => new Worker(new URL('./secret-racer.js', import.meta.url), { workerData: { base, rounds: ROUNDS, racers: RACERS, gate } }))
  const outcomes = (await Promise.all(racers.map(async (racer) => (await once(racer, 'message'))[0] as string[])))
  const split = Array.from({ length: ROUNDS }, (_, round) => new Set(outcomes.map((racer) => racer[round]))).filter((seen) => seen.size !== 1)
  t.same(split.map((seen) => [...seen]), [], 'every round: one secret, the same for every racer')
  t.notOk(outcomes.flat().some((outcome) => outcome.startsWith('refused')), 'no racer refused to start')
})
