import t from 'tap'
import { LockWaits } from '../../src/store/lock-waits.js'

/*
 * LockWaits on a clock of its own: each pause moves it and returns at once, so these tests say in
 * which order things are tried, and how often, without waiting for anything.
 */

const locked = () => Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' })
const isLocked = (error: unknown) => (error as { code?: unknown }).code === 'SQLITE_BUSY'

/** An operation as the store runs one (guarded-store.ts): tried once, and waited out only after a lock error. */
async function run<T>(waits: LockWaits, work: () => T | Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    if (!waits.isLocked(error)) throw error
    return waits.retry(work, error)
  }
}

function clocked(budgetMs: number, probe: () => void) {
  let now = 0
  const pauses: number[] = []
  const waits = new LockWaits({
    budgetMs,
    isLocked,
    probe,
    now: () => now,
    pause: async (ms) => {
      pauses.push(ms)
      now += ms
    }
  })
  return { waits, pauses, now: () => now }
}

/**
 * A clock whose pauses end only when the test moves it (`advance`), then lets the event loop turn
 * a few times: the test decides what happens between two probes.
 */
function steppedClock() {
  let now = 0
  let timers: { at: number; end: () => void }[] = []
  const clock = {
    now: () => now,
    pause: (ms: number) => new Promise<void>((end) => timers.push({ at: now + ms, end })),
    pending: () => timers.length
  }
  const advance = async (ms: number) => {
    now += ms
    const due = timers.filter((timer) => timer.at <= now)
    timers = timers.filter((timer) => timer.at > now)
    for (const timer of due) timer.end()
    for (let turn = 0; turn < 10; turn++) await new Promise((resolve) => setImmediate(resolve))
  }
  return { advance, clock }
}

t.test('work that finds no lock runs once, with no probe', async (t) => {
  let probes = 0
  const { waits, pauses } = clocked(1000, () => probes++)
  t.equal(await run(waits, () => 42), 42)
  t.equal(probes, 0)
  t.strictSame(pauses, [])
})

t.test('work locked out is tried again each time the probe finds the lock free', async (t) => {
  let tries = 0
  let probes = 0
  const { waits } = clocked(10_000, () => {
    probes++
    if (probes % 3 !== 0) throw locked()
  })
  const result = await run(waits, () => {
    tries++
    if (tries < 3) throw locked()
    return 'written'
  })
  t.equal(result, 'written')
  t.equal(tries, 3, 'tried again after each free probe')
  t.equal(probes, 6, 'two locked probes before each free one')
})

t.test('an error other than the lock is thrown at once', async (t) => {
  let probes = 0
  const { waits } = clocked(1000, () => probes++)
  await t.rejects(
    run(waits, () => {
      throw new Error('disk I/O error')
    }),
    { message: 'disk I/O error' }
  )
  t.equal(probes, 0)
})

t.test('locked out past the budget: the lock error, after probes spaced at most 50 ms apart', async (t) => {
  const { waits, now } = clocked(1000, () => {
    throw locked()
  })
  await t.rejects(
    run(waits, () => {
      throw locked()
    }),
    { code: 'SQLITE_BUSY' }
  )
  t.ok(now() >= 1000, 'the whole budget was waited')
})

t.test('a probe that meets another error lets the work try again and meet it itself', async (t) => {
  let tries = 0
  const { waits } = clocked(1000, () => {
    throw new Error('disk I/O error')
  })
  await t.rejects(
    run(waits, () => {
      tries++
      throw tries === 1 ? locked() : new Error('disk I/O error')
    }),
    { message: 'disk I/O error' }
  )
  t.equal(tries, 2)
})

t.test('many operations waiting share one probe, and probing stops when none waits', async (t) => {
  const { advance, clock } = steppedClock()
  let probes = 0
  let free = false
  const waits = new LockWaits({
    budgetMs: 100_000,
    isLocked,
    probe: () => {
      probes++
      if (!free) throw locked()
    },
    now: clock.now,
    pause: clock.pause
  })
  let tries = 0
  const work = () => {
    tries++
    if (!free) throw locked()
    return 'done'
  }
  const waiting = Array.from({ length: 50 }, () => run(waits, work))
  for (let step = 0; step < 10; step++) await advance(50)
  t.equal(probes, 10, 'one probe at a time for all fifty, not one each')
  free = true
  await advance(50)
  t.strictSame(await Promise.all(waiting), Array(50).fill('done'))
  t.equal(tries, 100, 'each tried twice: locked out, then free')
  t.equal(probes, 11)
  for (let step = 0; step < 10; step++) await advance(50)
  t.equal(probes, 11, 'no probing once nothing waits')
  t.equal(clock.pending(), 0, 'and no timer left behind')
})

t.test('settled waits for every operation that met the lock, until it lands', async (t) => {
  const { advance, clock } = steppedClock()
  let free = false
  const waits = new LockWaits({
    budgetMs: 100_000,
    isLocked,
    probe: () => {
      if (!free) throw locked()
    },
    now: clock.now,
    pause: clock.pause
  })
  let settled = false
  await waits.settled().then(() => (settled = true))
  t.ok(settled, 'nothing met the lock: settled at once')

  const landed: string[] = []
  const write = run(waits, () => {
    if (!free) throw locked()
    landed.push('write')
    return 'landed'
  })
  await advance(0)
  settled = false
  const closing = waits.settled().then(() => (settled = true))
  await advance(50)
  t.notOk(settled, 'not while the write waits for the lock')
  free = true
  await advance(50)
  await closing
  t.strictSame(landed, ['write'], 'the write landed before settled did')
  t.equal(await write, 'landed')
})
