// A worker thread of secret-race.ts (not a test of its own): one of several instances starting at once.
import { join } from 'node:path'
import { parentPort, workerData } from 'node:worker_threads'
import { loadConfig } from '../../src/config.js'
import { resolveJwtSecret } from '../../src/secret.js'

const { base, rounds, startsARound, racers, gate } = workerData as { base: string; rounds: number; startsARound: number; racers: number; gate: Int32Array }
// The configuration read once: reading it for every start took longer than the start itself, and let the racers drift apart.
const template = loadConfig({ TRACER_DB: join(base, 'unused', 'tracer.sqlite') })
const outcomes: string[] = []
for (let round = 0; round < rounds; round += 1) {
  const configs = Array.from({ length: startsARound }, (_, i) => ({ ...template, TRACER_DB: join(base, String(round * startsARound + i), 'tracer.sqlite') }))
  // Every racer reaches this round's line before any goes on: the starts are as close as threads get.
  Atomics.add(gate, round, 1)
  while (Atomics.load(gate, round) < racers) {
    // spin: a wait here would let the others start first
  }
  for (const config of configs) {
    try {
      outcomes.push(resolveJwtSecret(config).secret)
    } catch (error) {
      outcomes.push(`refused: ${(error as Error).message}`)
    }
  }
}
parentPort!.postMessage(outcomes)
