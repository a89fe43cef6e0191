import { executionAsyncResource } from 'node:async_hooks'

let held: Promise<object> | undefined

/**
 * Holds one entry of Node's `process.nextTick` queue for the life of the process, and resolves to it.
 *
 * Why: `nextTick` builds each entry from an object literal with two symbol-computed keys, and V8's
 * optimised `nextTick` defines those keys inline only while the hidden classes its feedback names
 * are alive. A hidden class lives only as long as an object has it, so one full collection while the
 * queue is empty (a start's own work, a burst of writes, V8's memory reducer in a quiet spell) frees
 * them; the feedback then stays megamorphic and every later `nextTick`, several a request on every
 * route, defines both keys through V8's runtime. An entry held here keeps those classes alive.
 *
 * Inside a `nextTick` callback the execution resource is the entry itself. Not an async hook: enabling
 * one, even for a moment, turns on V8's promise hooks, and V8 then stops inlining promise and `await`
 * operations for the rest of the process.
 */
export function holdTickQueueShapes(): Promise<object> {
  held ??= new Promise((resolve) => process.nextTick(() => resolve(executionAsyncResource())))
  return held
}
