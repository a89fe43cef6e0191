import { existsSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { demoBatch } from '../../src/demo/generate.js'
import type { BulkLoad } from '../../src/domain/records.js'
import { StoreMissingError } from '../../src/store/port.js'
import { openSqliteStore } from '../../src/store/sqlite/store.js'
import type { WhenMissing } from '../../src/store/when-missing.js'
import { defaultSites } from '../sites.js'

const NOW = Date.parse('2026-03-01T12:00:00Z')
const small = () => demoBatch(defaultSites, { events: 200, days: 3, seed: 7, now: NOW })
const everything = { start: 0, end: NOW + 1 }

function open(t: Test, path: string, whenMissing: WhenMissing) {
  const store = openSqliteStore(path, defaultSites, { whenMissing })
  t.teardown(() => store.close())
  return store
}

async function eventCount(store: ReturnType<typeof open>) {
  return (await store.events.page({ window: everything, order: 'asc', limit: 1000 })).length
}

t.test('a store a server creates awaits the demo, receives it whole once, and then awaits nothing', async (t) => {
  const store = open(t, join(t.testdir(), 'new.sqlite'), 'create-for-demo')
  t.equal(await store.firstStart.awaitsDemo(), true)
  const load = small()
  t.equal(await store.firstStart.seedDemo(() => load, NOW / 1000), 'seeded')
  t.equal(await eventCount(store), 200)
  t.ok(load.traces.length > 0 && load.transitions.length > 0 && load.heartbeats.length > 0, 'the demo has every kind of record')
  t.equal((await store.traces.history(load.transitions[0]!.event_no)).length > 0, true, 'the history is written too')
  t.equal(await store.firstStart.awaitsDemo(), false)
  t.equal(await store.firstStart.seedDemo(small, NOW / 1000), 'not-awaited', 'a second start seeds nothing')
})

t.test('a store that existed before a server opened it never awaits the demo', async (t) => {
  const path = join(t.testdir(), 'imported.sqlite')
  const importer = open(t, path, 'create')
  await importer.close()
  const store = open(t, path, 'create-for-demo')
  t.equal(await store.firstStart.awaitsDemo(), false)
  t.equal(await store.firstStart.seedDemo(small, NOW / 1000), 'not-awaited')
  t.equal(await eventCount(store), 0)
})

t.test('data written into a store awaiting the demo ends the wait, and the demo is not written', async (t) => {
  const store = open(t, join(t.testdir(), 'busy.sqlite'), 'create-for-demo')
  await store.traces.create(1, 1_700_000_000)
  await store.traces.setStatus(1, 'stages/tsar_classification', 'complete', 1_700_000_001, 'importer')
  t.equal(await store.firstStart.seedDemo(small, NOW / 1000), 'holds-data')
  t.equal(await store.firstStart.awaitsDemo(), false)
  t.equal(await eventCount(store), 0, 'no demo event')
  t.equal((await store.traces.find(1))?.['stages/tsar_classification'], 'complete', 'the trace is as it was written')
})

t.test('a demo that fails half way leaves nothing behind, and the store still awaits it', async (t) => {
  const store = open(t, join(t.testdir(), 'half.sqlite'), 'create-for-demo')
  const broken = (): BulkLoad => {
    const load = small()
    // Written after the events, traces and datatrail: a heartbeat that cannot be stored.
    load.heartbeats.push({ ...load.heartbeats[0]!, heartbeat_id: 10n as unknown as number })
    return load
  }
  await t.rejects(store.firstStart.seedDemo(broken, NOW / 1000))
  t.equal(await eventCount(store), 0, 'none of the demo stayed')
  t.equal(await store.firstStart.awaitsDemo(), true, 'the next start seeds it')
  t.equal(await store.firstStart.seedDemo(small, NOW / 1000), 'seeded')
  t.equal(await eventCount(store), 200)
})

t.test('refusing a missing store names its path and creates nothing', async (t) => {
  const path = join(t.testdir(), 'typo', 'x.sqlite')
  t.throws(() => openSqliteStore(path, defaultSites, { whenMissing: 'refuse' }), new StoreMissingError(`There is no SQLite store at ${path}: check TRACER_DB`))
  t.equal(existsSync(join(t.testdir(), 'typo')), false, 'not even its folder')
  const created = open(t, path, 'create')
  await created.close()
  const again = open(t, path, 'refuse')
  t.equal(await again.users.count(), 0, 'an existing store opens')
})
