import t from 'tap'
import { BUDGET_PERIOD_MS, FairTurns } from '../../src/infrastructure/streamed-responses/window-reads.js'

/** Takes `pages` turns for `owner` one after the other, as a report reads its pages, noting each. */
async function report(turns: FairTurns, owner: string, pages: number, log: string[], running: number[]) {
  for (let page = 1; page <= pages; page++) {
    await turns.run(owner, async () => {
      running.push(turns.running)
      log.push(`${owner}${page}`)
    })
  }
}

t.test('turns go round the users: one user’s many reports delay another’s by a page each, not by whole reports', async (t) => {
  const turns = new FairTurns(1)
  const log: string[] = []
  const running: number[] = []
  const hog = Array.from({ length: 6 }, () => report(turns, 'hog', 3, log, running))
  const other = report(turns, 'operator', 3, log, running)
  await Promise.all([...hog, other])
  t.equal(log.length, 21)
  t.ok(running.every((count) => count === 1), 'one page at a time')
  const last = log.lastIndexOf('operator3')
  t.ok(last <= 6, `the operator’s last page came ${last + 1}th of 21, between the hog’s pages`)
  t.strictSame(log.slice(0, 6).filter((page) => page.startsWith('operator')), ['operator1', 'operator2', 'operator3'].slice(0, log.slice(0, 6).filter((page) => page.startsWith('operator')).length))
})

t.test('a free queue gives a turn at once; a busy one after a turn of the event loop, in the order of the round', async (t) => {
  const turns = new FairTurns(2)
  const first = await turns.turn('a')
  const second = await turns.turn('b')
  t.equal(turns.running, 2)
  let granted = ''
  const third = turns.turn('a').then((end) => ((granted += 'a'), end))
  const fourth = turns.turn('c').then((end) => ((granted += 'c'), end))
  t.equal(turns.waiting, 2)
  first()
  first()
  t.equal(turns.running, 1, 'ending a turn twice ends it once')
  t.equal(granted, '', 'the next turn is not given in the same turn of the event loop')
  const end = await third
  t.equal(granted, 'a')
  second()
  ;(await fourth)()
  end()
  t.equal(turns.running, 0)
  t.equal(turns.waiting, 0)
})

t.test('past its time budget, a free queue makes the next turn wait for a round of the event loop; a new period gives it back', async (t) => {
  const turns = new FairTurns(1, 5)
  const spin = (ms: number) => {
    const until = performance.now() + ms
    while (performance.now() < until);
  }
  await turns.run('a', async () => spin(10))
  let granted = false
  const next = turns.turn('b').then((end) => ((granted = true), end))
  t.equal(turns.waiting, 1, 'the next turn waits though nothing runs')
  await Promise.resolve()
  t.notOk(granted, 'not at once')
  ;(await next)()
  t.ok(granted, 'it is given after a round of the event loop')
  // Once the period is over, the budget is whole again: a quick turn is given at once.
  spin(BUDGET_PERIOD_MS)
  const quick = turns.turn('c')
  t.equal(turns.waiting, 0, 'given at once')
  ;(await quick)()
})
