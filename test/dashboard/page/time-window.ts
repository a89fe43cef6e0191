import t from 'tap'
import { customWindowProblem, fromInput, toInput, windowAt } from '../../../dashboard/src/time-window.js'

const now = Date.UTC(2026, 2, 1, 12, 30)

t.test('a span ends now; fixed bounds stay fixed', async (t) => {
  t.strictSame(windowAt({ preset: '24h' }, now), { start_time_utc: '2026-02-28T12:30:00.000Z', end_time_utc: '2026-03-01T12:30:00.000Z' })
  t.strictSame(windowAt({ preset: '1h' }, now).start_time_utc, '2026-03-01T11:30:00.000Z')
  const fixed = { start: Date.UTC(2026, 0, 1), end: Date.UTC(2026, 0, 2) }
  t.strictSame(windowAt(fixed, now), windowAt(fixed, now + 86_400_000))
})

t.test('the bounds typed are read as UTC, written as the page writes times', async (t) => {
  t.equal(fromInput('2026-03-01 12:30'), now)
  t.equal(fromInput('2026-03-01T12:30'), now)
  t.equal(fromInput(' 2026-03-01 12:30:15 '), now + 15_000)
  t.equal(fromInput('2026-03-01'), Date.UTC(2026, 2, 1), 'a date alone is its midnight')
  t.equal(toInput(now), '2026-03-01 12:30')
  t.equal(fromInput(toInput(now)), now, 'what is shown reads back')
  t.equal(fromInput(''), undefined)
  t.equal(fromInput('2026-02-30 10:00'), undefined, 'an impossible date')
  t.equal(fromInput('2026-03-01 24:00'), undefined, 'an impossible hour')
  t.equal(fromInput('2026-03-01 12:60'), undefined)
  t.equal(fromInput('2026-03-01 12:30:60'), undefined)
  t.equal(fromInput('yesterday'), undefined)
})

t.test('a window needs both bounds, the end after the start', async (t) => {
  t.equal(customWindowProblem(1, 2), undefined)
  t.match(customWindowProblem(undefined, 2), /start/)
  t.match(customWindowProblem(1, undefined), /end/)
  t.match(customWindowProblem(2, 2), /after/)
})
