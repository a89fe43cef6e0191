import t from 'tap'
import { holdTickQueueShapes } from '../../src/start/tick-queue-shapes.js'

t.test("the service holds one of nextTick's queue entries, whose two symbol keys are the shapes it keeps", async (t) => {
  const held = await holdTickQueueShapes()
  // Were Node to run a tick's callback in another resource, or build its entries without these
  // keys, the hold would keep nothing: this says so on the Node the suite runs on.
  t.ok(held, 'an entry is held')
  const keys = Object.getOwnPropertySymbols(held).map((symbol) => symbol.description)
  // Node 24 adds a third, its async context frame.
  t.match(keys, ['async_id_symbol', 'trigger_async_id_symbol'])
  t.equal(await holdTickQueueShapes(), held, 'held once a process: a second call holds nothing more')
})
