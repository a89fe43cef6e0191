import { createHook } from 'node:async_hooks'

let held: object | undefined

/**
 * Holds one entry of Node's `process.nextTick` queue for the life of the process, and returns it.
 *
 * Why: `nextTick` builds each entry from an object literal with two symbol-computed keys, and V8's
 * optimised `nextTick` defines those keys inline only while the hidden classes its feedback names
 * are alive. A hidden class lives only as long as an object has it, so one full collection while the
 * queue is empty (a start's own work, a burst of writes, V8's memory reducer in a quiet spell) frees
 * them; the feedback then stays megamorphic and every later `nextTick`, a dozen or more a request on
 * every route, defines both keys through V8's runtime. An entry held here keeps those classes alive.
 *
 * An async hook is the one public way to see an entry: it is enabled for the one `nextTick` made
 * here, then disabled, so no request pays for it. On a Node whose queue entries are not handed to
 * hooks this holds nothing and costs nothing.
 */
export function holdTickQueueShapes(): object | undefined {
  if (held !== undefined) return held
  const hook = createHook({
    init(_asyncId, type, _triggerAsyncId, resource) {
      if (type === 'TickObject') held ??= resource
    }
  })
  hook.enable()
  process.nextTick(() => {})
  hook.disable()
  return held
}
