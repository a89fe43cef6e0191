import t from 'tap'
import { DEFAULT_VIEW, queryOfView, sameChoice, viewOfQuery, type View } from '../../../dashboard/src/view-url.js'

const from = Date.UTC(2026, 2, 1, 12, 30)
const to = Date.UTC(2026, 2, 2)

t.test('a view and its query string read back as each other; defaults are left out', async (t) => {
  const views: [View, string][] = [
    [DEFAULT_VIEW, ''],
    [{ choice: { preset: '3d' }, filters: { verdict: 'stuck', site: 'kko' }, event: 5000 }, '?window=3d&verdict=stuck&site=kko&event=5000'],
    [{ choice: { start: from, end: to }, filters: { verdict: 'all', site: 'all' }, event: undefined }, '?from=2026-03-01T12:30Z&to=2026-03-02T00:00Z'],
    [{ choice: { start: from + 15_000, end: to }, filters: { verdict: 'in_progress', site: 'all' }, event: 0 }, '?from=2026-03-01T12:30:15Z&to=2026-03-02T00:00Z&verdict=in_progress&event=0']
  ]
  for (const [view, query] of views) {
    t.equal(queryOfView(view), query)
    t.strictSame(viewOfQuery(query), view, `read back: ${query}`)
  }
  t.strictSame(viewOfQuery('?from=2026-03-01T12%3A30Z&to=2026-03-02T00%3A00Z').choice, { start: from, end: to }, 'percent-encoded as well')
})

t.test('what a link gets wrong takes the default, the rest is kept', async (t) => {
  t.strictSame(viewOfQuery('?window=2w&verdict=bad&site=KKO;x&event=1.5'), DEFAULT_VIEW)
  t.strictSame(viewOfQuery('?event=-1').event, undefined)
  t.strictSame(viewOfQuery('?from=2026-02-30T10:00Z&to=2026-03-02T00:00Z&window=6h').choice, { preset: '6h' }, 'an impossible date')
  t.strictSame(viewOfQuery('?from=2026-03-02T00:00Z&to=2026-03-01T12:30Z').choice, DEFAULT_VIEW.choice, 'an end before the start')
  t.strictSame(viewOfQuery('?from=2026-03-01T12:30&to=2026-03-02T00:00Z').choice, DEFAULT_VIEW.choice, 'a bound without its Z')
  t.strictSame(viewOfQuery('?site=kko&event=7'), { ...DEFAULT_VIEW, filters: { verdict: 'all', site: 'kko' }, event: 7 })
})

t.test('two choices of the same window are the same choice', async (t) => {
  t.ok(sameChoice({ preset: '3d' }, { preset: '3d' }))
  t.notOk(sameChoice({ preset: '3d' }, { preset: '6h' }))
  t.ok(sameChoice({ start: 1, end: 2 }, { start: 1, end: 2 }))
  t.notOk(sameChoice({ start: 1, end: 2 }, { preset: '3d' }))
})
