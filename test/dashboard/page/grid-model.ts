import t from 'tap'
import {
  applyTransition,
  classificationCell,
  joinWindow,
  reapply,
  parseKey,
  replaceAudit,
  sitesOf,
  stageCell,
  visibleRows
} from '../../../dashboard/src/grid-model.js'
import { audited, finding, trace } from './records.js'

const window = { start_time_utc: '2026-03-01T00:00:00.000Z', end_time_utc: '2026-03-02T00:00:00.000Z' }
const summary = { events: 2, complete: 0, in_progress: 1, stuck: 1, contradiction: 0 }
const stuckConversion = finding('stuck', 'kko', 'baseband_conversion')

function rows() {
  const report = {
    window,
    generated_at: '2026-03-02T00:00:00.000Z',
    summary,
    events: [audited(1), audited(2, { verdict: 'stuck', findings: [stuckConversion] })]
  }
  return joinWindow(report, [
    { event_no: 2, snr: 1, known_source_name: 'x', timestamp_utc: window.start_time_utc, trace: trace(2, ['stages/tsar_classification']) },
    { event_no: 1, snr: 1, known_source_name: 'x', timestamp_utc: window.start_time_utc }
  ])
}

t.test('the audit of a window is joined with its traces by event_no', async (t) => {
  const joined = rows()
  t.strictSame(joined.map((row) => [row.audit.event_no, row.trace?.event_no ?? null, row.stale]), [
    [1, null, false],
    [2, 2, false]
  ])
  t.equal(classificationCell(joined[0]!).state, 'in_progress', 'no trace: nothing is done')
  t.equal(classificationCell(joined[1]!).state, 'complete')
  t.equal(stageCell(joined[1]!, 'kko', 'baseband_conversion').state, 'stuck')
})

t.test('a live transition changes its cell at once and marks the event for a new audit record', async (t) => {
  const before = rows()
  const after = applyTransition(before, { event_no: 2, key: 'stages/baseband_conversion/sites/kko', from: 'incomplete', to: 'complete', at: 500, by: 'pipeline' })!
  t.equal(stageCell(after[1]!, 'kko', 'baseband_conversion').state, 'complete', 'a stuck finding cannot hold on a complete key')
  t.equal(after[1]!.stale, true)
  t.equal(after[1]!.trace!.update_timestamp, 500)
  t.equal(stageCell(before[1]!, 'kko', 'baseband_conversion').state, 'stuck', 'the rows given are not changed')
  t.equal(after[0], before[0], 'other events keep their rows')

  const reopened = applyTransition(after, { event_no: 2, key: 'stages/baseband_conversion/sites/kko', from: 'complete', to: 'incomplete', at: 600, by: 'pipeline' })!
  t.equal(stageCell(reopened[1]!, 'kko', 'baseband_conversion').state, 'in_progress')

  const noTrace = applyTransition(before, { event_no: 1, key: 'stages/tsar_classification', from: null, to: 'complete', at: 700, by: 'pipeline' })!
  t.equal(classificationCell(noTrace[0]!).state, 'complete', 'the first write creates the trace')
  t.equal(applyTransition(before, { event_no: 99, key: 'stages/tsar_classification', from: null, to: 'complete', at: 1, by: 'p' }), undefined, 'not in the grid')
  t.equal(applyTransition(before, { event_no: 2, key: 'stages/nonsense', from: null, to: 'complete', at: 1, by: 'p' }), undefined, 'not a stage')
})

t.test('a new audit record replaces the old one and moves the summary with it', async (t) => {
  const { rows: next, summary: moved } = replaceAudit(rows(), summary, audited(2, { verdict: 'complete' }))
  t.equal(next[1]!.audit.verdict, 'complete')
  t.strictSame(moved, { events: 2, complete: 1, in_progress: 1, stuck: 0, contradiction: 0 })
  t.strictSame(replaceAudit(rows(), summary, audited(99)).summary, summary, 'an event not shown changes nothing')
})

t.test('trace keys name a stage and a site', async (t) => {
  t.strictSame(parseKey('stages/tsar_classification'), { stage: 'tsar_classification', site: null })
  t.strictSame(parseKey('stages/data_registration/sites/gbo'), { stage: 'data_registration', site: 'gbo' })
  t.equal(parseKey('stages/unknown_stage/sites/gbo'), undefined)
  t.equal(parseKey('update_timestamp'), undefined)
})

t.test('the window’s sites come in configured order, merged from the events’ lists', async (t) => {
  const row = (sites: string[]) => ({ audit: audited(1, { sites }), trace: null, stale: false })
  t.strictSame(sitesOf([row(['chime', 'gbo']), row(['chime', 'kko', 'gbo']), row(['kko', 'hco'])]), ['chime', 'kko', 'gbo', 'hco'])
  t.strictSame(sitesOf([]), [])
})

t.test('filters keep events of a verdict, and of a site with only that site’s rows', async (t) => {
  const shown = (filters: Parameters<typeof visibleRows>[1]) =>
    visibleRows(rows(), filters).map(({ row, sites }) => [row.audit.event_no, sites])
  t.strictSame(shown({ verdict: 'all', site: 'all' }), [[1, ['chime', 'kko']], [2, ['chime', 'kko']]])
  t.strictSame(shown({ verdict: 'stuck', site: 'all' }), [[2, ['chime', 'kko']]])
  t.strictSame(shown({ verdict: 'all', site: 'kko' }), [[1, ['kko']], [2, ['kko']]])
  t.strictSame(shown({ verdict: 'contradiction', site: 'all' }), [])
  t.strictSame(shown({ verdict: 'all', site: 'hco' }), [])
})

t.test('transitions that came while the window was read are applied to what it read', async (t) => {
  const late = [
    { event_no: 2, key: 'stages/baseband_conversion/sites/kko', from: 'incomplete', to: 'complete' as const, at: 500, by: 'pipeline' },
    { event_no: 99, key: 'stages/tsar_classification', from: null, to: 'complete' as const, at: 501, by: 'pipeline' }
  ]
  const read = reapply(rows(), late)
  t.equal(stageCell(read[1]!, 'kko', 'baseband_conversion').state, 'complete')
  t.equal(read[1]!.stale, true, 'its event’s audit record is read again')
  t.equal(read.length, 2, 'an event the read does not hold is left out')
  t.strictSame(reapply(rows(), []), rows())
})
