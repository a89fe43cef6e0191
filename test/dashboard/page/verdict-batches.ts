import t from 'tap'
import type { AuditedEvent, StreamedTransition, VerdictChange } from '../../../dashboard/src/api-types.js'
import { applyVerdicts, joinWindow } from '../../../dashboard/src/grid-model.js'
import { streamParser, TraceStream } from '../../../dashboard/src/stream.js'
import { audited } from './records.js'

const at = '2026-03-01T13:00:00.000Z'
const message = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`
const stuck = (eventNo: number): VerdictChange => ({
  event_no: eventNo,
  from: 'in_progress',
  to: 'stuck',
  at,
  became_stuck: [{ site: 'chime', stage: 'baseband_callback_request', deadline_utc: at }],
  audit: audited(eventNo, { verdict: 'stuck' })
})
const transition: StreamedTransition = { event_no: 3, key: 'stages/tsar_classification', from: null, to: 'complete', at: 1.5, by: 'pipeline' }

/** A window of `count` events, all in progress. */
function window(count: number) {
  const events: AuditedEvent[] = Array.from({ length: count }, (_, i) => audited(i + 1))
  const summary = { events: count, complete: 0, in_progress: count, stuck: 0, contradiction: 0 }
  const report = { window: { start_time_utc: at, end_time_utc: at }, generated_at: at, summary, events }
  return { rows: joinWindow(report, []), summary }
}

t.test('the changes of verdict and verdicts messages that follow one another come together, in order; a transition between them keeps its place', async (t) => {
  const batches: (VerdictChange[] | StreamedTransition)[] = []
  const parser = streamParser({ onTransition: (seen) => batches.push(seen), onVerdicts: (changes) => batches.push(changes) })
  const burst = Array.from({ length: 500 }, (_, i) => stuck(i + 10))
  const text = [
    ': keep-alive\n\n',
    message('verdict', stuck(1)),
    message('verdicts', { changes: burst }),
    message('verdicts', { changes: [stuck(2), { event_no: 'not a change' }] }),
    message('transition', transition),
    message('verdict', stuck(3))
  ].join('')
  parser.feed(text)
  t.strictSame(batches, [[stuck(1), ...burst, stuck(2)], transition, [stuck(3)]], 'one call for the burst, data of another shape skipped')

  batches.length = 0
  const cut = Math.floor(text.length / 2)
  parser.feed(text.slice(0, cut))
  parser.feed(text.slice(cut))
  t.strictSame(batches.flat(), [stuck(1), ...burst, stuck(2), transition, stuck(3)], 'cut anywhere, nothing lost or doubled')
})

t.test('a burst of changes is applied to the grid in one pass: one copy of the rows, the summary moved', async (t) => {
  const { rows, summary } = window(65_000)
  const changes = Array.from({ length: 5000 }, (_, i) => stuck(2 * i + 1))
  const applied = applyVerdicts(rows, summary, changes)
  t.not(applied.rows, rows, 'a new array of rows')
  t.equal(applied.rows.filter((row) => row.audit.verdict === 'stuck').length, 5000)
  t.ok(changes.every((change) => applied.rows[change.event_no - 1]!.audit === change.audit), 'each event has its audit record from the stream')
  t.equal(applied.rows[1], rows[1], 'rows of events that did not change are the same objects')
  t.strictSame(applied.summary, { events: 65_000, complete: 0, in_progress: 60_000, stuck: 5000, contradiction: 0 })
  t.strictSame([applied.left, applied.missing], [false, false])

  const later = applyVerdicts(applied.rows, applied.summary, [{ ...stuck(1), from: 'stuck', to: null, audit: null }, stuck(70_000)])
  t.equal(later.rows, applied.rows, 'nothing the grid can apply: no copy')
  t.strictSame([later.left, later.missing], [true, true], 'an event that left the audit, one the grid does not have: the window is read again')
})

t.test('the page following the stream gets a verdicts message as one batch', async (t) => {
  const changes = Array.from({ length: 300 }, (_, i) => stuck(i + 1))
  const batches: VerdictChange[][] = []
  const paths: string[] = []
  let settled: () => void = () => {}
  const done = new Promise<void>((resolve) => (settled = resolve))
  const stream = new TraceStream(
    {
      fetch: async (path) => {
        paths.push(path)
        const body = new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode(message('verdicts', { changes })))
          }
        })
        return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } })
      },
      now: () => 0,
      random: () => 0,
      sleep: async () => {}
    },
    {
      onTransition: () => {},
      onVerdicts: (batch) => {
        batches.push(batch)
        settled()
      },
      onState: () => {},
      onConnected: () => {},
      onSessionEnded: () => {}
    }
  )
  stream.start()
  await done
  stream.stop()
  t.strictSame(paths, ['/v1/event-tracer/stream?verdicts=true'])
  t.equal(batches.length, 1, 'one batch')
  t.strictSame(batches[0], changes)
})
