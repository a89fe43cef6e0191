import type { FastifyBaseLogger } from 'fastify'
import t, { type Test } from 'tap'
import type { FeedTransition } from '../../src/domain/records.js'
import { TransitionHub, type TransitionHubOptions } from '../../src/infrastructure/live-stream/transition-hub.js'
import { StoreUnavailableError, type Store, type TransitionFeed } from '../../src/store/port.js'
import { openSqliteStore } from '../../src/store/sqlite/store.js'
import { siteModel } from '../../src/vocabulary.js'
import { untilTrue } from '../raw-http.js'

const KKO = 'stages/baseband_conversion/sites/kko'
const CHIME = 'stages/baseband_conversion/sites/chime'

/** A log that keeps its lines, by level. */
function capturedLog() {
  const lines: { level: string; message: string }[] = []
  const at = (level: string) => (...args: unknown[]) => void lines.push({ level, message: String(args.find((arg) => typeof arg === 'string')) })
  const log = { info: at('info'), warn: at('warn'), error: at('error'), debug: at('debug'), trace: at('trace'), fatal: at('fatal'), silent: () => {}, level: 'info' }
  return { lines, log: { ...log, child: () => log } as unknown as FastifyBaseLogger }
}

/**
 * The feed of a real SQLite store that can be made to fail, as an unreachable store does, and
 * counts its reads.
 */
function faultyFeed(store: Store) {
  const state = { positionFails: false, sinceFails: false, reads: 0, failedReads: 0 }
  const feed: TransitionFeed = {
    position: () => (state.positionFails ? Promise.reject(new StoreUnavailableError('down')) : store.transitions.position()),
    since: (position, limit) => {
      state.reads++
      if (!state.sinceFails) return store.transitions.since(position, limit)
      state.failedReads++
      return Promise.reject(new StoreUnavailableError('down'))
    }
  }
  return { feed, state }
}

function hubOn(t: Test, options: TransitionHubOptions = {}) {
  const store = openSqliteStore(':memory:', siteModel(['chime', 'kko']))
  const { feed, state } = faultyFeed(store)
  const { lines, log } = capturedLog()
  const hub = new TransitionHub(feed, log, { pollIntervalMs: 5, ...options })
  t.teardown(async () => {
    hub.close()
    await store.close()
  })
  let at = 1000
  /** One transition of `event_no` at `key`, written as update-trace does (each changes the value). */
  const write = (eventNo: number, key = KKO) => store.traces.setStatus(eventNo, key, at % 2 === 0 ? 'complete' : 'incomplete', at++, 'pipeline')
  return { hub, state, lines, write }
}

/** A listener that keeps what it is given of each page. */
function collector(wants: (transition: FeedTransition) => boolean = () => true) {
  const got: FeedTransition[] = []
  return { got, listener: { deliver: (page: readonly FeedTransition[]) => void got.push(...page.filter(wants)) } }
}

const eventsOf = (transitions: FeedTransition[]) => transitions.map((transition) => transition.event_no)

t.test('the hub reads from where the feed stood when the first listener joined, and gives each listener what it wants, in order', async (t) => {
  const { hub, write } = hubOn(t)
  await write(1)
  t.equal(hub.polling, false, 'nothing is read while nobody listens')
  const all = collector()
  const kko = collector((transition) => transition.key === KKO)
  await hub.listen(all.listener)
  await hub.listen(kko.listener)
  t.equal(hub.polling, true)
  await write(2)
  await write(3, CHIME)
  await write(4)
  await untilTrue(() => all.got.length === 3 && kko.got.length === 2, 'both listeners have theirs')
  t.strictSame(eventsOf(all.got), [2, 3, 4], 'what was written before the first listener joined is not delivered')
  t.strictSame(eventsOf(kko.got), [2, 4])
  t.match(all.got[0], { event_no: 2, key: KKO, from: null, to: 'complete', by: 'pipeline' })
})

t.test('the hub stops reading when the last listener leaves, and starts again where the feed stands then', async (t) => {
  const { hub, state, write } = hubOn(t)
  const first = collector()
  const stop = await hub.listen(first.listener)
  await write(1)
  await untilTrue(() => first.got.length === 1, 'the first listener has its transition')
  stop()
  stop()
  t.equal(hub.polling, false, 'no reads without listeners')
  t.equal(hub.listeners, 0)
  const reads = state.reads
  await write(2)
  const again = collector()
  await hub.listen(again.listener)
  await write(3)
  await untilTrue(() => again.got.length === 1, 'the new listener has its transition')
  t.strictSame(eventsOf(again.got), [3], 'what was written while nobody listened is not delivered')
  t.strictSame(eventsOf(first.got), [1], 'a listener that left gets nothing more')
  t.ok(state.reads > reads)
})

t.test('a backlog beyond a page is read page after page, one read each, in order, none lost or doubled', async (t) => {
  // Ten writes land long before the first read, a second after the listener joined.
  const { hub, state, write } = hubOn(t, { pageSize: 3, pollIntervalMs: 1000 })
  const got: FeedTransition[] = []
  let readsWhenAllArrived = 0
  let arrived = () => {}
  const allArrived = new Promise<void>((resolve) => (arrived = resolve))
  await hub.listen({
    deliver: (page) => {
      got.push(...page)
      if (got.length < 10) return
      readsWhenAllArrived = state.reads
      arrived()
    }
  })
  for (let eventNo = 1; eventNo <= 10; eventNo++) await write(eventNo)
  await allArrived
  t.strictSame(eventsOf(got), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
  t.equal(readsWhenAllArrived, 4, 'pages of 3, 3, 3 and 1: one read each')
})

t.test('a failing read is logged once per outage; listeners stay, and get what was written meanwhile once the store is back', async (t) => {
  const { hub, state, lines, write } = hubOn(t)
  const all = collector()
  await hub.listen(all.listener)
  state.sinceFails = true
  await write(1)
  await untilTrue(() => state.failedReads >= 5, 'several reads have failed')
  t.strictSame(
    lines.map((line) => line.level),
    ['warn'],
    'one warning for the whole outage'
  )
  t.match(lines[0]?.message, /cannot read new transitions from the store/)
  t.equal(hub.listeners, 1, 'the listener is still there')
  state.sinceFails = false
  await write(2)
  await untilTrue(() => all.got.length === 2, 'both transitions arrive')
  t.strictSame(eventsOf(all.got), [1, 2], 'nothing written during the outage is lost')
  t.strictSame(lines.map((line) => line.level), ['warn', 'info'], 'and one line when reading works again')

  state.sinceFails = true
  await untilTrue(() => lines.length === 3, 'a second outage is logged too')
  t.equal(lines[2]?.level, 'warn')
})

t.test('when the store cannot say where the feed stands, listen rejects and the next listener asks again', async (t) => {
  const { hub, state, write } = hubOn(t)
  state.positionFails = true
  await t.rejects(hub.listen(collector().listener), StoreUnavailableError)
  await t.rejects(hub.listen(collector().listener), StoreUnavailableError)
  t.equal(hub.polling, false)
  t.equal(hub.listeners, 0, 'the refused listeners are not kept')
  state.positionFails = false
  const all = collector()
  await hub.listen(all.listener)
  await write(7)
  await untilTrue(() => all.got.length === 1, 'the transition arrives')
})

t.test('a listener that throws does not keep the transition from the others', async (t) => {
  const { hub, lines, write } = hubOn(t)
  const broken = {
    deliver: () => {
      throw new Error('broken')
    }
  }
  const all = collector()
  await hub.listen(broken)
  await hub.listen(all.listener)
  await write(1)
  await write(2)
  await untilTrue(() => all.got.length === 2, 'the healthy listener has both')
  t.ok(lines.some((line) => line.level === 'error'), 'the failure is logged')
})
