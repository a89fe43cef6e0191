// A worker thread of secret-race.ts (not a test of its own): one of several instances starting at once.
import { join } from 'node:path'
import { parentPort, workerData } from 'node:worker_threads'
import { loadConfig } from '../../src/config.js'
import { resolveJwtSecret } from '../../src/secret.js'

const { base, rounds, racers, gate } = workerData as { base: string; rounds: number; racers: number; gate: Int32Array }
const outcomes: string[] = []
for (let round = 0; round < rounds; round += 1) {
  const config = loadConfig({ TRACER_DB: join(base, String(round), 'tracer.sqlite') })
  // Every racer reaches this round's line before any goes on: the starts are as close as threads get.
  Atomics.add(gate, round, 1)
  while (Atomics.load(gate, round) < racers) {
    // spin: a wait here would let the others start first
  }
  try {
    outcomes.push(resolveJwtSecret(config).secret)
  } catch (error) {
    outcomes.push(`refused: ${(error as Error).message}`)
  }
}
parentPort!.postMessage(outcomes)
